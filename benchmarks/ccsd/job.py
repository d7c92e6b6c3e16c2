"""The shared frame of the in-process competitor jobs: read (basis, xyz, threads, 2S, reference)
from the command line, run the SCF with symmetry, time CCSD and (T), print one JSON line."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from pyscf import gto, scf


def run(
    ccsd: Callable[[Any, int], tuple[float, Callable[[], float]]],
    rates: Callable[[], dict[str, float]] | None = None,
) -> None:
    """``ccsd(mf, threads)`` runs CCSD and returns its total energy and a call that runs (T) on
    it and returns the (T) energy; ``rates()``, called last, adds what the program measured of
    itself (executed flops per second) to the JSON."""
    basis, xyz, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    spin, reference = int(sys.argv[4]), sys.argv[5]
    start = time.perf_counter()
    mol = gto.M(atom=xyz, basis=basis, spin=spin, symmetry=True, verbose=0)
    if mol.topgroup in ("Coov", "Dooh"):
        # PySCF's linear groups do not converge open-shell Pi states: run in the abelian subgroup.
        subgroup = "C2v" if mol.topgroup == "Coov" else "D2h"
        mol = gto.M(atom=xyz, basis=basis, spin=spin, symmetry=subgroup, verbose=0)
    mf = {"rhf": scf.RHF, "uhf": scf.UHF, "rohf": scf.ROHF}[reference](mol).run(conv_tol=1e-9)
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
        **(rates() if rates is not None else {}),
    }
    print(json.dumps(result))
