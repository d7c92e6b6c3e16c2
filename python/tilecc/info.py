"""What this tilecc is built from and runs on: the first thing a bug report needs."""

from __future__ import annotations

import os
import platform

from tilecc import _blas, _core
from tilecc.context import default_context


def collect() -> dict[str, str]:
    """Version, BLAS, kernels, threads and build options, as strings."""
    _blas.ensure_loaded()
    blas = _core.blas_info()
    ctx = default_context()
    return {
        "tilecc": _core.version(),
        "python": platform.python_version(),
        "cpu features": _core.cpu_features(),
        "BLAS library": blas["library"],
        "BLAS vendor": blas["vendor"],
        "BLAS kernels": blas["core"] or "(not reported)",
        "BLAS kernel choice": blas["core_choice"],
        "BLAS config": blas["config"] or "(not reported)",
        "permute kernel": _core.permute_kernel_name(),
        "threads": f"{ctx.threads} (TILECC_THREADS={os.environ.get('TILECC_THREADS', 'unset')}; "
        "BLAS runs single-threaded inside tasks)",
        "policy": f"{ctx.policy} (available: {', '.join(_core.policy_names())})",
        "build": _core.build_flags(),
    }
