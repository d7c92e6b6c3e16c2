"""Competitor: tilecc, whole CCSD(T) job (SCF, CCSD, (T)) in this process; prints JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from job import run

import tilecc


def ccsd(mf: Any, threads: int) -> tuple[float, Callable[[], float]]:
    solver = tilecc.CCSD(mf, threads=threads).run()
    return solver.e_tot, solver.ccsd_t


if __name__ == "__main__":
    run(ccsd)
