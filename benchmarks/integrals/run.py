#!/usr/bin/env python3
"""The MO integrals of a closed-shell CCSD job, transformed from AO integrals held once for every
batch against PySCF computing them again for each batch (ao2mo.general from the molecule), in
one process and one run: the SCF's own AO integrals dropped (as PySCF does when they do not fit
its max_memory), the same batches both ways, the integrals compared.

    python benchmarks/integrals/run.py [--json PATH] [--cases benzene/cc-pvdz ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
from pyscf import gto, scf
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import BENZENE, URACIL

import tilecc
from tilecc import measure
from tilecc.cc.rccsd import CLASSES
from tilecc.host import integrals
from tilecc.host.pyscf import chemical_core, restricted_problem

CASES = {"benzene/cc-pvdz": (BENZENE, "cc-pvdz"), "uracil/cc-pvdz": (URACIL, "cc-pvdz")}


def problem_seconds(mf: scf.hf.RHF, held: bool) -> tuple[float, dict[str, np.ndarray], int]:
    """Seconds to build the integral classes, their dense arrays, and the AO bytes held."""
    ctx = tilecc.Context(threads=2)
    # Held or not by the memory they may have: all of it, or none.
    with mock.patch.object(integrals, "available_memory", return_value=(1 << 62) if held else 0):
        start = time.perf_counter()
        p = restricted_problem(mf, frozen=chemical_core(mf.mol), context=ctx, classes=CLASSES)
        seconds = time.perf_counter() - start
    return seconds, {name: t.to_dense() for name, t in p.eri.items()}, ctx.held_ao_bytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--cases", nargs="+", default=["benzene/cc-pvdz"], choices=sorted(CASES))
    args = parser.parse_args()
    table = Table(title="integral classes: per-batch AO integrals over held ones (2 threads)")
    for col in ("case", "per batch s", "held s", "ratio", "AO held MB", "largest difference"):
        table.add_column(col, justify="right")
    records = []
    for name in args.cases:
        atoms, basis = CASES[name]
        mol = gto.M(atom=atoms, basis=basis, symmetry=True, verbose=0)
        mf = scf.RHF(mol).run(conv_tol=1e-10)
        # As when the AO integrals do not fit PySCF's max_memory: its Fock builds are direct
        # and keep none either.
        mf._eri, mf.max_memory = None, 1
        per_batch, reference, _ = problem_seconds(mf, held=False)
        held, values, held_bytes = problem_seconds(mf, held=True)
        difference = max(float(np.abs(values[k] - reference[k]).max()) for k in reference)
        table.add_row(name, f"{per_batch:.2f}", f"{held:.2f}", f"{per_batch / held:.2f}",
                      f"{held_bytes / 1e6:.0f}", f"{difference:.1e}")  # fmt: skip
        records.append({"case": name, "per_batch_seconds": per_batch, "held_seconds": held,
                        "ratio": per_batch / held, "held_ao_bytes": held_bytes,
                        "largest_difference": difference})  # fmt: skip
    Console(width=120).print(table)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
