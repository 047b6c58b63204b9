"""The package imports without its binary, and calling an op then says how to build it."""
import subprocess
import sys
import textwrap


def test_import_without_binary_gives_clear_message():
    code = textwrap.dedent("""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "inductor_convt3d._C":
                    raise ImportError("simulated missing binary")
        sys.meta_path.insert(0, Block())
        import torch, inductor_convt3d
        assert not inductor_convt3d._ext.available()
        try:
            inductor_convt3d.conv_transpose3d(torch.randn(1, 1, 2, 2, 2), torch.randn(1, 1, 2, 2, 2))
        except RuntimeError as e:
            print("MESSAGE:", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "simulated missing binary" in out.stdout
    assert "pip install --no-build-isolation -e ." in out.stdout
