#!/usr/bin/env python3
"""Contraction engine benchmark: CCSD ladder and ring terms, tilecc GFLOP/s over DGEMM GFLOP/s.

    python benchmarks/contract/run.py [--json PATH] [--quick]

Prints one table; its last lines are the ratios the engine is held to (tilecc over DGEMM measured
in the same run, symmetric speed-up against flops skipped, dispatch overhead per task). With
--json, writes one JSON record per line with the run's metadata.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rich.console import Console
from rich.table import Table
from tilecc_engine import measure as measure_tilecc
from workloads import Workload

import tilecc
from tilecc import info, measure

FULL = {"ladder": [(16, 100)], "ring": [(20, 150)], "tiles": [16, 32, 64], "threads": [1, 2]}
QUICK = {"ladder": [(10, 60)], "ring": [(10, 60)], "tiles": [16, 32], "threads": [1, 2]}


def metadata() -> dict[str, object]:
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except OSError:
        sha = ""
    facts = info.collect()
    return {
        "git": sha,
        "cpu": platform.processor() or platform.machine(),
        "cpu_features": facts["cpu features"],
        "blas": facts["BLAS config"],
        "blas_kernels": facts["BLAS kernels"],
        "host_cores": os.cpu_count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    grid = QUICK if args.quick else FULL
    console = Console()
    meta = metadata()
    records: list[dict[str, object]] = []
    table = Table(title="tilecc contraction engine vs DGEMM (same BLAS, same run)")
    for col in (
        "workload",
        "o",
        "v",
        "tile",
        "thr",
        "sym",
        "tasks",
        "GFLOP/s",
        "DGEMM",
        "ratio",
        "flops kept",
    ):
        table.add_column(col, justify="right")
    for workload in ("ladder", "ring"):
        for o, v in grid[workload]:
            for symmetry in (False, True):
                for tile in grid["tiles"]:
                    for threads in grid["threads"]:
                        work = Workload(
                            workload, o, v, tile, symmetry, tilecc.Context(threads=threads)
                        )
                        # DGEMM is measured right next to each case: this machine's speed drifts
                        # by tens of percent over minutes, and a ratio must compare like with like.
                        dgemm = measure.dgemm_gflops(threads, repeats=args.repeats)
                        m = measure_tilecc(work, args.repeats)
                        rec = {
                            "workload": workload,
                            "o": o,
                            "v": v,
                            "tile": tile,
                            "threads": threads,
                            "symmetry": symmetry,
                            "tilecc_gflops": m["tilecc_gflops"],
                            "dgemm_gflops": dgemm,
                            "ratio": m["tilecc_gflops"] / dgemm,
                            **m,
                            **meta,
                        }
                        records.append(rec)
                        table.add_row(
                            workload,
                            str(o),
                            str(v),
                            str(tile),
                            str(threads),
                            "yes" if symmetry else "no",
                            str(m["tasks"]),
                            f"{m['tilecc_gflops']:.1f}",
                            f"{dgemm:.1f}",
                            f"{rec['ratio']:.2f}",
                            f"{m['executed_flops'] / m['dense_flops']:.4f}",
                        )
                        console.print(
                            f"  {workload} o={o} v={v} tile={tile} threads={threads} "
                            f"sym={symmetry}: {rec['ratio']:.2f} of DGEMM",
                            style="dim",
                        )
    overhead = {t: measure.dispatch_overhead(t) for t in grid["threads"]}
    console.print(table)

    def find(workload: str, tile: int, threads: int, symmetry: bool) -> dict[str, object] | None:
        return next(
            (
                r
                for r in records
                if r["workload"] == workload
                and r["tile"] == tile
                and r["threads"] == threads
                and r["symmetry"] == symmetry
            ),
            None,
        )

    lines = []
    top = max(grid["threads"])
    for workload, tile in (("ladder", 32), ("ladder", 16), ("ring", 32)):
        r = find(workload, tile, top, False)
        if r:
            lines.append(
                f"{workload}, no symmetry, tile {tile}, {top} threads: "
                f"tilecc/DGEMM = {r['ratio']:.2f}"
            )
    for workload in ("ladder", "ring"):
        nosym, sym = find(workload, 32, top, False), find(workload, 32, top, True)
        if nosym and sym:
            flop_cut = sym["dense_flops"] / sym["executed_flops"]  # type: ignore[operator]
            # The dense spin-orbital run is too large to time: predict it at the measured rate of
            # the dense (no-symmetry) run of the same term and tile.
            time_cut = (sym["dense_flops"] / (nosym["tilecc_gflops"] * 1e9)) / sym["seconds"]  # type: ignore[operator]
            lines.append(
                f"{workload}, tile 32, {top} threads: symmetry skips flops x{flop_cut:.1f}, "
                f"time falls x{time_cut:.1f} (effective {sym['tilecc_gflops']:.1f} vs "
                f"dense {nosym['tilecc_gflops']:.1f} GFLOP/s)"
            )
    for t, sec in overhead.items():
        lines.append(f"dispatch overhead, {t} thread(s): {sec * 1e9:.0f} ns per task")
    for line in lines:
        console.print(line)
    if args.json:
        dispatch = [
            {"workload": "dispatch", "threads": t, "seconds_per_task": sec, **meta}
            for t, sec in overhead.items()
        ]
        measure.write_json_lines(args.json, records + dispatch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
