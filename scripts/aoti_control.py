"""Debug aid: an AOTInductor package of a model with no convt3d op at all, loaded in a fresh
process. If this crashes too, the crash belongs to the machine's toolchain, not to convt3d."""
import subprocess
import sys

import torch

out = sys.argv[1]
m = torch.nn.Sequential(torch.nn.Conv3d(4, 4, 3), torch.nn.ReLU()).eval()
x = torch.randn(2, 4, 5, 5, 5)
ep = torch.export.export(m, (x,))
path = torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/control.pt2")
code = f"import torch; r = torch._inductor.aoti_load_package({path!r}); print(r(torch.randn(2, 4, 5, 5, 5)).shape)"
done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
print("control rc", done.returncode, done.stdout.strip(), done.stderr.strip()[-300:])
