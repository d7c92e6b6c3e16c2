"""Competitor: tilecc, whole CCSD(T) job (SCF, CCSD, (T)) in this process; prints JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from job import run
from pyscf import scf

import tilecc
from tilecc.host.pyscf import chemical_core


def ccsd(mf: Any, threads: int) -> tuple[float, Callable[[], float]]:
    # Frozen core, as the PySCF and Psi4 jobs run it; ROHF-(T) runs on semicanonical orbitals.
    options = {"semicanonical": True} if isinstance(mf, scf.rohf.ROHF) else {}
    solver = tilecc.CCSD(mf, frozen=chemical_core(mf.mol), threads=threads, **options).run()
    return solver.e_tot, solver.ccsd_t


if __name__ == "__main__":
    run(ccsd)
