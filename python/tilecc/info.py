"""What this tilecc is built from and runs on: the first thing a bug report needs."""

from __future__ import annotations

import os
import platform

from tilecc import _blas, _core
from tilecc.context import default_context
from tilecc.mpi import world


def collect() -> dict[str, str]:
    """Version, BLAS, kernels, threads and build options, as strings. A BLAS or thread setting
    that does not work is reported in place of what it would have shown (``problem``), so that
    this is the command that diagnoses it."""
    out = {
        "tilecc": _core.version(),
        "python": platform.python_version(),
        "cpu features": _core.cpu_features(),
    }
    try:
        _blas.ensure_loaded()
    except ValueError as exc:
        out["BLAS library"] = "not loaded"
        out["problem"] = str(exc)
        out["build"] = _core.build_flags()
        return out
    blas = _core.blas_info()
    out |= {
        "BLAS library": blas["library"],
        "BLAS vendor": blas["vendor"],
        "BLAS kernels": blas["core"] or "(not reported)",
        "BLAS kernel choice": blas["core_choice"],
        "BLAS config": blas["config"] or "(not reported)",
        "permute kernel": _core.permute_kernel_name(),
    }
    setting = f"TILECC_THREADS={os.environ.get('TILECC_THREADS', 'unset')}"
    try:
        ctx = default_context()
        out["threads"] = (
            f"{ctx.threads} per rank ({setting}; BLAS runs single-threaded inside tasks)"
        )
        out["policy"] = f"{ctx.policy} (available: {', '.join(_core.policy_names())})"
    except ValueError as exc:
        out["threads"] = f"cannot start ({setting})"
        out["problem"] = str(exc)
    try:
        w = world()
        nodes = f"{w.nodes} {'virtual ' if w.virtual_nodes else ''}node(s) of {w.ranks_per_node}"
        out["MPI"] = f"{w.library}; {w.size} rank(s), {nodes}"
    except ValueError as exc:
        out["MPI"] = "cannot start"
        out["problem"] = str(exc)
    out["build"] = _core.build_flags()
    return out
