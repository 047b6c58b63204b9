#!/usr/bin/env bash
# scripts/absmax_probe.cu over block caps and unroll factors of csrc/cuda/fwd/h16_scale.cu (copies
# with kAbsmaxBlocks / kAbsmaxUnroll replaced, built side by side): which setting reads x at
# the copy bandwidth. Run from the repo root on the GPU machine.
set -u
NV=nvcc; [ -x /usr/local/cuda/bin/nvcc ] && NV=/usr/local/cuda/bin/nvcc
VARIANTS=${VARIANTS:-"512:4 1056:4 2048:4 1056:8 4096:2"}
for v in $VARIANTS; do
  b=${v%:*} u=${v#*:}
  sed -e "s/kAbsmaxBlocks = [0-9]*/kAbsmaxBlocks = $b/" -e "s/kAbsmaxUnroll = [0-9]*/kAbsmaxUnroll = $u/" \
    csrc/cuda/fwd/h16_scale.cu >"/tmp/hs_${b}_$u.cu"
  $NV -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Icsrc -Icsrc/cuda/fwd \
    scripts/absmax_probe.cu "/tmp/hs_${b}_$u.cu" -o "/tmp/ap_${b}_$u" &
done
wait
for v in $VARIANTS; do
  b=${v%:*} u=${v#*:}
  echo "== blocks $b unroll $u"
  "/tmp/ap_${b}_$u"
done
