"""The package logger, "inductor_convt3d".

Per graph: INFO when the pass rewrote something, DEBUG otherwise; DEBUG for each transposed
convolution it left alone, with the reason. Turn it on with `TORCH_LOGS="+inductor_convt3d"`
(torch accepts any logger name there) or with the logging module as usual.
"""
from __future__ import annotations

import logging

log = logging.getLogger("inductor_convt3d")
