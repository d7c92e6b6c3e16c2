"""Finding and loading the BLAS that the core calls (the core loads it by path at run time)."""

from __future__ import annotations

import os
from pathlib import Path

from tilecc import _core


def default_library() -> str:
    """The BLAS shared library tilecc uses: $TILECC_BLAS_LIBRARY, else scipy-openblas32's.

    OpenBLAS won the DGEMM comparison on our machines (see README, "BLAS"); MKL from PyPI is a
    drop-in alternative through TILECC_BLAS_LIBRARY=/path/to/libmkl_rt.so.2.
    """
    override = os.environ.get("TILECC_BLAS_LIBRARY")
    if override:
        return override
    import scipy_openblas32

    return str(Path(scipy_openblas32.get_lib_dir()) / scipy_openblas32.get_library(fullname=True))


def ensure_loaded() -> None:
    """Load the BLAS once per process."""
    if not _core.blas_loaded():
        _core.load_blas(default_library())
