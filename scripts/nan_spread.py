"""Do non-finite inputs stay inside their receptive field? One NaN or Inf in random x, then count
the outputs that are NaN where the fp64 reference is not ("invented") and the reverse ("lost"),
for the transposed wgmma kernel stacked by w taps (w4), by depth planes (j2) and unstacked (j1).
Stacked warpgroups multiply zero weight rows by box values outside the field of those rows'
outputs (design doc v25), so 0 x NaN can reach outputs the reference keeps finite.
Needs a GPU: python3 scripts/nan_spread.py"""
import os

import torch
import torch.nn.functional as F

import inductor_convt3d as ic

ops = torch.ops.convt3d
SWITCHES = ("CONVT3D_TWG", "CONVT3D_TWG_STACK", "CONVT3D_TWG_WSTACK")
SPECS = {  # name: (N, Cin, Cout, size, kernel, switches); stride 1, no padding
    "w4": (1, 16, 16, (4, 6, 20), (3, 5, 7),
           {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "1"}),
    "j2": (1, 24, 24, (6, 6, 20), (3, 3, 3),
           {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "2", "CONVT3D_TWG_WSTACK": "0"}),
    "j1": (1, 24, 24, (6, 6, 20), (3, 3, 3), {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "1"}),
}


def main():
    for name, (n, ci, co, size, k, switches) in SPECS.items():
        for key in SWITCHES:
            os.environ.pop(key, None)
        os.environ.update(switches)
        for dt in (torch.bfloat16, torch.float32):
            for val in (float("inf"), float("nan")):
                torch.manual_seed(0)
                x = torch.randn(n, ci, *size, dtype=dt)
                w = torch.randn(ci, co, *k, dtype=dt)
                x[0, 3, 2, 3, 9] = val
                ref = torch.isnan(F.conv_transpose3d(x.double(), w.double()))
                xc, wc = x.cuda(), w.cuda()
                y = torch.isnan(ic.conv_transpose3d(xc, wc).cpu())
                path = ops._forward_path(xc, wc, [1] * 3, [0] * 3, [0] * 3, [1] * 3, 1)
                print(f"nan_spread {name} {dt} {val}: {path}: invented {(y & ~ref).sum().item()}, "
                      f"lost {(~y & ref).sum().item()}, ref nan {ref.sum().item()}")


if __name__ == "__main__":
    main()
