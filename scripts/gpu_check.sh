#!/usr/bin/env bash
# One GPU-machine call: build, then the stages named in STAGES (default "tests"), then a short
# summary table last. Logs go to $OUT (the device tool brings them back).
#   STAGES=tests,sanitize,ab,bench  PYTEST_ARGS="tests/test_ops_*.py"  BENCH_ARGS="--cases 1,2"
#   (tests without PYTEST_ARGS: the whole suite, in four processes side by side)
#   AB_ARGS="--cases 6,7 --dtypes bf16"   (ab: scripts/halo_ab.py, kernel A/B timings)
#   SANITIZE_ARGS="--with CONVT3D_TWG"    (sanitize: only the cases that set that switch;
#                 "--layout ncdhw" or "--layout cl": one layout; "--dtype fp32": strict fp32
#                 only)  SANITIZE_TOOLS="racecheck"
#   EXTRA="python3 scripts/host_overhead.py 9 bf16 ndhwc"   (extra: any commands, after ab)
#   STAGE_TIMEOUT=200   (seconds for the tests and for each sanitizer; a hang then costs that,
#                        not the call's limit; 0, the default, means none)
#   OLD_TREE=.ab_old    (an older tree for scripts/ab_trees.sh in EXTRA, built alongside this
#                        one instead of after it; ab_trees.sh then skips its build)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
STAGES=${STAGES:-tests}
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then  # wheels the GPU image lacks (expecttest)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
summary=()
# The GPU image sets CXX=/opt/gcc/bin/g++, a GCC whose libstdc++ is linked statically into every
# shared library it builds; such a library crashes in iostream/regex locale code inside torch's
# process (seen for AOTInductor packages even without convt3d: scripts/aoti_control.py). Build
# extensions and Inductor C++ with the system compiler, which links the shared libstdc++.
if [[ "${CXX:-}" == /opt/gcc/* && -x /usr/bin/g++ ]]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
# The H100/H200 build (wgmma kernels), whatever TORCH_CUDA_ARCH_LIST the image sets.
export CONVT3D_CUDA_ARCHS=${CONVT3D_CUDA_ARCHS:-9.0a}
echo "CONVT3D_CUDA_ARCHS=$CONVT3D_CUDA_ARCHS (image TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST-unset})"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"

t0=$(date +%s)
old_pid=""
if [[ -n "${OLD_TREE:-}" ]]; then
  # (the two builds overlap: each alone leaves most of the 16 cores idle near its end)
  (cd "$OLD_TREE" && rm -f .built && MAX_JOBS=16 python3 setup.py build_ext --inplace \
    >"$OUT/build_old.log" 2>&1 && touch .built) &
  old_pid=$!
fi
if MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1; then
  summary+=("build: ok in $(( $(date +%s) - t0 )) s")
else
  tail -60 "$OUT/build.log"; echo "build: FAILED"; exit 1
fi
if [[ -n "$old_pid" ]]; then
  if wait "$old_pid"; then
    summary+=("old tree ($OLD_TREE) build: ok, $(( $(date +%s) - t0 )) s after the start")
  else
    tail -30 "$OUT/build_old.log"; echo "old tree build: FAILED"; exit 1
  fi
fi

if [[ ",$STAGES," == *",tests,"* ]]; then
  t0=$(date +%s)
  if [[ -z "${PYTEST_ARGS:-}" ]]; then
    # The whole suite in four processes at once, so it fits one 600 s call with room to spare:
    # tests/test_export.py (AOTInductor builds, mostly one g++ process: 133 s + 74 s on an H100
    # host, 2026-11-27), the torch.compile files (about 117 s of the 294 s the rest took in one
    # process, H100, 2026-11-27), test_fast_forward.py (93 s) and every other file (85 s).
    # Side by side they took 294 s in all on an H200 (2026-11-28, "other" the longest).
    # A new test file lands in "other" by itself.
    mapfile -t all_files < <(ls tests/test_*.py)
    compile_files=(); fast_files=(); other_files=()
    for f in "${all_files[@]}"; do
      case "$f" in
        tests/test_export.py) ;;
        tests/test_compile_*.py) compile_files+=("$f") ;;
        tests/test_fast_forward.py) fast_files+=("$f") ;;
        *) other_files+=("$f") ;;
      esac
    done
    # Logs and JUnit files of the four go to one archive, tests.tgz: the device tool brings
    # back at most 8 files from $OUT.
    T="$OUT/tests"; mkdir -p "$T"
    python3 -m pytest tests/test_export.py -q -ra -p no:cacheprovider \
      --junitxml="$T/junit_export.xml" >"$T/pytest_export.log" 2>&1 &
    export_pid=$!
    # (an empty group is left out: pytest given no file collects the whole tests/ folder)
    names=()
    for name in compile fast other; do
      declare -n files="${name}_files"
      if (( ${#files[@]} > 0 )); then names+=("$name"); fi
      unset -n files
    done
    pids=()
    for name in "${names[@]}"; do
      declare -n files="${name}_files"
      timeout "${STAGE_TIMEOUT:-0}" python3 -m pytest "${files[@]}" -q -ra -p no:cacheprovider \
        --junitxml="$T/junit_$name.xml" >"$T/pytest_$name.log" 2>&1 &
      pids+=($!)
      unset -n files
    done
    for i in "${!names[@]}"; do
      wait "${pids[$i]}"; rc=$?
      summary+=("tests (${names[$i]}): rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$T/pytest_${names[$i]}.log")")
    done
    wait "$export_pid"
    rc_export=$?
    grep -E "^(FAILED|ERROR)" "$T"/pytest_*.log | head -40
    summary+=("tests (test_export.py): rc=$rc_export in $(( $(date +%s) - t0 )) s: $(tail -1 "$T/pytest_export.log")")
    tar -czf "$OUT/tests.tgz" -C "$OUT" tests && rm -rf "$T"
  else
    # (eval: PYTEST_ARGS may quote, e.g. -k 'a or b')
    eval "timeout ${STAGE_TIMEOUT:-0} python3 -m pytest ${PYTEST_ARGS} -q -ra -p no:cacheprovider --junitxml=\"$OUT/junit.xml\"" \
      >"$OUT/pytest.log" 2>&1
    rc=$?
    grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -40
    summary+=("tests: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/pytest.log")")
  fi
fi

if [[ ",$STAGES," == *",sanitize,"* ]]; then
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    t0=$(date +%s)
    # shellcheck disable=SC2086
    timeout "${STAGE_TIMEOUT:-0}" compute-sanitizer --tool $tool --error-exitcode 7 python3 scripts/sanitize_subset.py \
      ${SANITIZE_ARGS:-} >"$OUT/sanitize_$tool.log" 2>&1
    rc=$?
    tail -3 "$OUT/sanitize_$tool.log"
    summary+=("compute-sanitizer $tool: rc=$rc in $(( $(date +%s) - t0 )) s")
  done
fi

if [[ ",$STAGES," == *",ab,"* ]]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  python3 scripts/halo_ab.py ${AB_ARGS:-} >"$OUT/ab.log" 2>&1
  rc=$?
  cat "$OUT/ab.log"
  summary+=("ab: rc=$rc in $(( $(date +%s) - t0 )) s")
fi

if [[ ",$STAGES," == *",extra,"* ]]; then
  t0=$(date +%s)
  bash -c "${EXTRA:-true}" >"$OUT/extra.log" 2>&1
  rc=$?
  cat "$OUT/extra.log"
  summary+=("extra: rc=$rc in $(( $(date +%s) - t0 )) s")
fi

if [[ ",$STAGES," == *",bench,"* ]]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  python3 -m inductor_convt3d bench --out "$OUT" ${BENCH_ARGS:-} >"$OUT/bench.log" 2>&1
  rc=$?
  tail -60 "$OUT/bench.log"
  summary+=("bench: rc=$rc in $(( $(date +%s) - t0 )) s")
fi

echo "================ summary ================"
printf '%s\n' "${summary[@]}"
