#!/usr/bin/env python3
"""Memory per thread (paper 000, Figs. 13-15): a CCSD job's iterations with tilecc's per-worker
scratch pools against a fresh allocation per request from the system allocator (glibc) and from
mimalloc (preloaded), at several tile sizes, with each worker's allocations and high-water mark.

    python benchmarks/memory/run.py [--json PATH] [--cases NAME ...] [--tiles 8 16 32]

Each configuration runs in its own process (an allocator is preloaded or not); the three
allocators alternate, twice, and the faster of the two runs counts. mimalloc comes from the
`bench` extra (`pip install '.[bench]'`); without it, its column is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import BENZENE, METHANOL, NITROGEN

from tilecc import measure

CASES = {
    "n2/cc-pvtz": (NITROGEN, "cc-pvtz"),
    "methanol/cc-pvdz": (METHANOL, "cc-pvdz"),
    "benzene/cc-pvdz": (BENZENE, "cc-pvdz"),
}
ITERATIONS = 6
# One job: its CCSD iterations after the first (which builds the plans), per iteration.
JOB = """
import json, sys, time, warnings, tilecc
from pyscf import gto, scf
from tilecc.host.pyscf import chemical_core
atoms, basis, tile, iterations = json.loads(sys.argv[1])
mol = gto.M(atom="; ".join(atoms), basis=basis, symmetry=True, verbose=0)
mf = scf.RHF(mol).run(conv_tol=1e-9)
stamps = []
cc = tilecc.CCSD(mf, frozen=chemical_core(mol), threads=2, tile=tile, max_cycle=iterations,
                 callback=lambda *_: stamps.append(time.perf_counter()))
with warnings.catch_warnings():
    # Not converged in a few iterations, as intended: only their time counts.
    warnings.filterwarnings("ignore", message=".*did not converge", category=RuntimeWarning)
    cc.run()
ex = cc.context.executor
print(json.dumps({"seconds": (stamps[-1] - stamps[0]) / (len(stamps) - 1),
                  "mode": ex.scratch_mode, "workers": ex.worker_scratch}))
"""


def mimalloc_library() -> Path | None:
    found = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "lib" / "libmimalloc.so"
    return found if found.is_file() else None


def run_job(name: str, tile: int, allocator: str, mimalloc: Path | None) -> dict:
    atoms, basis = CASES[name]
    env = {
        **os.environ,
        "TILECC_SCRATCH_ALLOCATION": "pooled" if allocator == "pools" else "per-task",
    }
    if allocator == "mimalloc" and mimalloc is not None:
        env["LD_PRELOAD"] = str(mimalloc)
    run = subprocess.run(
        [sys.executable, "-c", JOB, json.dumps([atoms, basis, tile, ITERATIONS])],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--tiles", nargs="+", type=int, default=[8, 16, 32])
    args = parser.parse_args()
    mimalloc = mimalloc_library()
    allocators = ["pools", "system", *(["mimalloc"] if mimalloc else [])]
    console = Console()
    if mimalloc is None:
        console.print("mimalloc not installed (pip install '.[bench]'): left out")
    table = Table(
        title="CCSD iteration, 2 threads: per-worker pools against allocation per request"
    )
    columns = (
        "case",
        "tile",
        "pools ms",
        "system/pools",
        "mimalloc/pools",
        "allocations per worker (pools / per request)",
        "high water per worker KB",
    )
    for column in columns:
        table.add_column(column, justify="right")
    records = []
    for name in args.cases:
        for tile in args.tiles:
            best: dict[str, dict] = {}
            for _ in range(2):
                for allocator in allocators:
                    r = run_job(name, tile, allocator, mimalloc)
                    if allocator not in best or r["seconds"] < best[allocator]["seconds"]:
                        best[allocator] = r
            pools = best["pools"]
            ratio = {a: best[a]["seconds"] / pools["seconds"] for a in allocators}
            table.add_row(
                name, str(tile), f"{1e3 * pools['seconds']:.1f}", f"{ratio['system']:.3f}",
                f"{ratio['mimalloc']:.3f}" if "mimalloc" in ratio else "–",
                " ".join(str(w["allocations"]) for w in pools["workers"]) + " / "
                + " ".join(str(w["allocations"]) for w in best["system"]["workers"]),
                " ".join(f"{w['high_water_bytes'] / 1024:.0f}" for w in pools["workers"]),
            )  # fmt: skip
            records.append(
                {
                    "case": name,
                    "tile": tile,
                    "threads": 2,
                    "pools_seconds": pools["seconds"],
                    **{f"{a}_over_pools": ratio[a] for a in allocators if a != "pools"},
                    "pool_allocations": [w["allocations"] for w in pools["workers"]],
                    "request_allocations": [w["allocations"] for w in best["system"]["workers"]],
                    "high_water_bytes": [w["high_water_bytes"] for w in pools["workers"]],
                    "high_water_total_bytes": sum(w["high_water_bytes"] for w in pools["workers"]),
                }
            )
    console.print(table)
    if args.json:
        measure.write_json_lines(args.json, records)


if __name__ == "__main__":
    main()
