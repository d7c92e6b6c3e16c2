#!/usr/bin/env python3
"""Closed-shell (T): the occupied-triple loop against the virtual-triple loop on the same CCSD
amplitudes, alternating (best of 2 each), with the loop tilecc chooses and each loop's executed
flop rate over this machine's DGEMM rate measured in the same run.

    python benchmarks/triples/run.py [--json PATH] [--cases NAME ...] [--threads 2]

A case is a molecule, a basis and a point group (lowering benzene's from D2h to C1 sweeps the
size of the occupied loop's W, v^3/|G|, across the cache).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pyscf import gto, scf
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import BENZENE, METHANOL, URACIL, WATER

import tilecc
from tilecc import measure
from tilecc.cc import triples
from tilecc.host.pyscf import chemical_core

#: name: (atoms, basis, point group; True: the molecule's largest D2h subgroup)
CASES = {
    "h2o/aug-cc-pvtz C2v": (WATER, "aug-cc-pvtz", True),
    "h2o/aug-cc-pvtz C1": (WATER, "aug-cc-pvtz", False),
    "methanol/cc-pvtz C1": (METHANOL, "cc-pvtz", False),
    "benzene/cc-pvdz D2h": (BENZENE, "cc-pvdz", True),
    "benzene/cc-pvdz C2v": (BENZENE, "cc-pvdz", "C2v"),
    "benzene/cc-pvdz Cs": (BENZENE, "cc-pvdz", "Cs"),
    "uracil/cc-pvdz Cs": (URACIL, "cc-pvdz", True),
}
DEFAULT_CASES = [name for name in CASES if not name.startswith("uracil")]
LOOPS = ("occupied", "virtual")


def measure_case(name: str, threads: int, dgemm: float) -> dict:
    atoms, basis, symmetry = CASES[name]
    mol = gto.M(atom="; ".join(atoms), basis=basis, symmetry=symmetry, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-9)
    cc = tilecc.CCSD(mf, frozen=chemical_core(mol), threads=threads).run()
    seconds: dict[str, float] = {loop: float("inf") for loop in LOOPS}
    energies: dict[str, float] = {}
    for _ in range(2):
        for loop in LOOPS:
            start = time.perf_counter()
            energies[loop] = triples.restricted_triples(cc.t1, cc.t2, cc.problem, loop=loop)
            seconds[loop] = min(seconds[loop], time.perf_counter() - start)
    flops = {loop: triples.restricted_kernel(cc.t1, cc.t2, cc.problem, loop).executed_flops
             for loop in LOOPS}  # fmt: skip
    vir = cc.problem.vir
    return {
        "case": name,
        "point_group": mol.groupname,
        "occupied": len(cc.problem.occ.irreps),
        "virtual": len(vir.irreps),
        "threads": threads,
        "w_bytes": 8 * triples.largest_occupied_loop_w(vir),
        "chosen": triples.closed_shell_loop(vir),
        "occupied_seconds": seconds["occupied"],
        "virtual_seconds": seconds["virtual"],
        "virtual_over_occupied": seconds["virtual"] / seconds["occupied"],
        "occupied_rate": flops["occupied"] / seconds["occupied"] / 1e9 / dgemm,
        "virtual_rate": flops["virtual"] / seconds["virtual"] / 1e9 / dgemm,
        "energy_difference": abs(energies["virtual"] - energies["occupied"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES, choices=list(CASES))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    console = Console()
    dgemm = measure.dgemm_gflops(args.threads)
    table = Table(title=f"closed-shell (T), {args.threads} threads, DGEMM {dgemm:.1f} GFLOP/s")
    for column in ("case", "o", "v", "W MB", "occupied s", "virtual s", "virtual/occupied",
                   "rates/DGEMM", "chosen"):  # fmt: skip
        table.add_column(column, justify="right")
    records = []
    for name in args.cases:
        r = measure_case(name, args.threads, dgemm)
        records.append({"dgemm_gflops": dgemm, **r})
        table.add_row(
            name, str(r["occupied"]), str(r["virtual"]), f"{r['w_bytes'] / 1e6:.2f}",
            f"{r['occupied_seconds']:.3f}", f"{r['virtual_seconds']:.3f}",
            f"{r['virtual_over_occupied']:.2f}",
            f"{r['occupied_rate']:.2f} / {r['virtual_rate']:.2f}", r["chosen"],
        )  # fmt: skip
    console.print(table)
    if args.json:
        measure.write_json_lines(args.json, records)


if __name__ == "__main__":
    main()
