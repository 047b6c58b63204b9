"""torch.compile integration: the graph pass, the convt3d backend, enable()/disable().

graph_pass.py  the CustomGraphPass (uuid, counting, logging)
rewrite.py     matching aten transposed convolutions and replacing them with convt3d ops
slots.py       adding our passes to Inductor's config slots beside the user's
enable.py      enable()/disable() for the default inductor backend
backend.py     the "convt3d" backend (Inductor + our passes), mode=/options= like inductor
"""
from .backend import convt3d_backend
from .enable import disable, enable, is_enabled
from .graph_pass import JOINT, POST_GRAD, Convt3dGraphPass

__all__ = ["Convt3dGraphPass", "JOINT", "POST_GRAD", "convt3d_backend", "disable", "enable",
           "is_enabled"]
