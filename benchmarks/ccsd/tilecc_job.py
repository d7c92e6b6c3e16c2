"""Competitor: tilecc, whole CCSD(T) job (SCF, CCSD, (T)) in this process; prints JSON with the
executed-flop rates of the CCSD iterations and of (T)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# tilecc first, as its CLI does: loading its BLAS names this CPU's kernels (OPENBLAS_CORETYPE) to
# the OpenBLAS that PySCF bundles, which is older than many CPUs and otherwise runs PySCF's
# integral transformation with a generic kernel at half speed.
import tilecc

# isort: split
from job import run
from pyscf import scf

from tilecc.host.pyscf import chemical_core

solver: Any = None


def ccsd(mf: Any, threads: int) -> tuple[float, Callable[[], float]]:
    global solver
    # Frozen core, as the PySCF and Psi4 jobs run it; ROHF-(T) runs on semicanonical orbitals.
    options = {"semicanonical": True} if isinstance(mf, scf.rohf.ROHF) else {}
    solver = tilecc.CCSD(mf, frozen=chemical_core(mf.mol), threads=threads, **options).run()
    return solver.e_tot, solver.ccsd_t


def rates() -> dict[str, float]:
    """Executed GFLOP/s of the CCSD iterations (their contractions' flops over their wall time)
    and of the (T) step (its kernels' GEMM flops over its wall time)."""
    stats = solver.context.stats
    return {
        "ccsd_gflops": stats.flops / solver.iteration_seconds / 1e9,
        "t_gflops": stats.triples_flops / stats.triples_seconds / 1e9,
    }


if __name__ == "__main__":
    run(ccsd, rates)
