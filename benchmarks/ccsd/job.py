"""The shared frame of the in-process competitor jobs: read (basis, xyz, threads) from the command
line, run the symmetric RHF, time CCSD and (T), print one JSON line."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from pyscf import gto, scf


def run(ccsd: Callable[[Any, int], tuple[float, Callable[[], float]]]) -> None:
    """``ccsd(mf, threads)`` runs CCSD and returns its total energy and a call that runs (T) on
    it and returns the (T) energy."""
    basis, xyz, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = time.perf_counter()
    mol = gto.M(atom=xyz, basis=basis, symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-9)
    t_scf = time.perf_counter()
    e_ccsd, triples = ccsd(mf, threads)
    t_ccsd = time.perf_counter()
    e_t = triples()
    t_end = time.perf_counter()
    result = {
        "e_tot": e_ccsd + e_t,
        "e_t": e_t,
        "scf_s": t_scf - start,
        "ccsd_s": t_ccsd - t_scf,
        "t_s": t_end - t_ccsd,
        "total_s": t_end - start,
    }
    print(json.dumps(result))
