"""`quiet_torch_notices`: keep torch's import-time notices out of what hotstart prints while it compiles.

On a machine with a CUDA build of torch, a CUDA toolkit (``nvcc`` on PATH or ``CUDA_HOME``) but no
GPU, the first compiled C++ kernel makes Inductor import ``torch.utils.cpp_extension``
(``torch/_inductor/cpp_builder.py``, ``_get_torch_related_args``, while it checks the CPU's vector
ISA), and that import logs ``No CUDA runtime is found, using CUDA_HOME=...`` as a warning. It
says nothing about the warmup or the export, so both (the warmup's workloads, the ``.pt2`` export's
AOTInductor compile) drop exactly that record, only while they compile, and only from that logger;
every other warning still comes through. It lives here, beside the compile cache, because both
compile: the export does not import the warmup.
"""
from __future__ import annotations

import contextlib
import logging

_LOGGER = "torch.utils.cpp_extension"
_NOTICES = ("No CUDA runtime is found",)


class _DropNotices(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_NOTICES))


@contextlib.contextmanager
def quiet_torch_notices():
    logger = logging.getLogger(_LOGGER)
    f = _DropNotices()
    logger.addFilter(f)
    try:
        yield
    finally:
        logger.removeFilter(f)
