"""Competitor: PySCF CCSD(T) (RCCSD, or UCCSD for UHF and ROHF references), whole job in this
process; prints JSON."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from job import run
from pyscf import cc, lib


def ccsd(mf: Any, threads: int) -> tuple[float, Callable[[], float]]:
    solver = cc.CCSD(mf).set_frozen().run()
    return float(solver.e_tot), solver.ccsd_t


if __name__ == "__main__":
    lib.num_threads(int(sys.argv[3]))  # before the SCF, which runs threaded too
    run(ccsd)
