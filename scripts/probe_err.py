import sys, subprocess
cases = {
 "weight4d": "ic.conv_transpose3d(x, w[...,0])",
 "groups": "ic.conv_transpose3d(x, w, groups=3)",
 "stride0": "ic.conv_transpose3d(x, w, stride=0)",
 "chan": "ic.conv_transpose3d(torch.randn(2,3,3,4,5), w)",
 "dtype": "ic.conv_transpose3d(x, w.double())",
 "outsize": "ic.conv_transpose3d(x, w, padding=5)",
 "direct_op": "torch.ops.convt3d.conv_transpose3d(x, w, None, [0,1,1],[0,0,0],[0,0,0],[1,1,1],1)",
 "grad_bias": "torch.ops.convt3d.conv_transpose3d_grad_bias(x[0])",
 "torchcheck_aten": "torch.ops.aten.mm(torch.randn(2,3), torch.randn(2,3))",
}
pre = "import torch, inductor_convt3d as ic; x=torch.randn(2,4,3,4,5); w=torch.randn(4,2,3,3,3)\ntry:\n    "
for k, v in cases.items():
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", pre + v + "\nexcept Exception as e: print(type(e).__name__, str(e)[:80])"], capture_output=True, text=True)
    print(f"{k:16s} rc={r.returncode} {r.stdout.strip()[:100]} {r.stderr.strip().splitlines()[0][:100] if r.stderr.strip() else ''}")
