#!/usr/bin/env python3
"""WorkQ (paper 003) against get/compute/accumulate, on 2 ranks in 2 virtual nodes of one rank
(1 worker each) with an emulated network between them (TILECC_NET_LATENCY_US, TILECC_NET_GBPS):
paper 003's TCE mini-app at tiles of 50 and 500 doubles per side, and CCSD's ladder term against
tile size. Each case is timed in its own mpiexec run three ways: paper 003's
get/compute/accumulate (every task gets its own blocks: TILECC_FETCH_ONCE=off), tilecc's default
(each remote block got once per rank and contraction), WorkQ with its workers sending their own
updates of remote blocks (TILECC_WORKQ_Q2=off), WorkQ whole (those updates handed to the
courier, Q2), and WorkQ with role switching (a worker finding Q1 empty fetches for itself:
TILECC_WORKQ_SWITCH=on). The speed-up is the paper's baseline's time over WorkQ's (the target: at
least 1.5 on the mini-app at tile 50 with 20 us latency), printed beside WorkQ's over the
default's and over WorkQ's without Q2, and WorkQ's time over WorkQ's with switching.

    python benchmarks/workq/run.py [--json PATH] [--latency-us 20] [--gbps 0] [--depth 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tilecc import measure

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent
CASES = [("miniapp", 50, 1000), ("miniapp", 500, 1000)] + [
    ("ladder", tile, 40) for tile in (5, 10, 20)
]


def run(
    workload: str,
    tile: int,
    n: int,
    depth: int,
    latency: float,
    gbps: float,
    fetch_once: bool,
    q2: bool = True,
    switching: bool = False,
) -> dict:
    env = {
        **os.environ,
        "TILECC_RANKS_PER_NODE": "1",
        "TILECC_NET_LATENCY_US": str(latency),
        "TILECC_NET_GBPS": str(gbps),
        "TILECC_FETCH_ONCE": "on" if fetch_once else "off",
        "TILECC_WORKQ_Q2": "on" if q2 else "off",
        "TILECC_WORKQ_SWITCH": "on" if switching else "off",
    }
    job = [sys.executable, str(HERE / "job.py"), workload, str(tile), str(depth), str(n), "3"]
    proc = subprocess.run(
        [str(BIN / "mpiexec"), "-n", "2", *job],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{workload} tile {tile} depth {depth} failed: {proc.stderr[-500:]}")
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--latency-us", type=float, default=20.0)
    parser.add_argument("--gbps", type=float, default=0.0, help="0: unlimited bandwidth")
    parser.add_argument("--depth", type=int, default=8)
    args = parser.parse_args()
    console = Console(width=130)
    title = (
        f"WorkQ vs get/compute/accumulate: 2 ranks, 2 virtual nodes, {args.latency_us:g} us "
        f"latency, {'unlimited' if not args.gbps else f'{args.gbps:g} GB/s'} bandwidth"
    )
    table = Table(title=title)
    for col in ("workload", "tile", "per-task gets s", "once per rank s", "WorkQ, no Q2 s",
                "WorkQ s", "switching s", "speed-up", "over once per rank", "over no Q2",
                "switching's", "same result"):  # fmt: skip
        table.add_column(col, justify="right")
    records = []
    for workload, tile, n in CASES:
        # Paper 003's baseline gets every task's blocks for it; tilecc's default gets each remote
        # block once per rank and contraction; WorkQ's courier gets them ahead of the workers.
        base = run(workload, tile, n, 0, args.latency_us, args.gbps, fetch_once=False)
        once = run(workload, tile, n, 0, args.latency_us, args.gbps, fetch_once=True)
        no_q2 = run(workload, tile, n, args.depth, args.latency_us, args.gbps, True, q2=False)
        workq = run(workload, tile, n, args.depth, args.latency_us, args.gbps, fetch_once=True)
        switching = run(workload, tile, n, args.depth, args.latency_us, args.gbps, True,
                        switching=True)  # fmt: skip
        speedup = base["seconds"] / workq["seconds"]
        same = all(
            abs(base["checksum"] - r["checksum"]) <= 1e-9 * abs(base["checksum"])
            for r in (once, no_q2, workq, switching)
        )
        records.append({
            "workload": workload, "tile": tile, "n": n, "ranks": 2, "ranks_per_node": 1,
            "latency_us": args.latency_us, "gbps": args.gbps, "depth": args.depth,
            "get_compute_accumulate_seconds": base["seconds"],
            "fetch_once_seconds": once["seconds"], "workq_without_q2_seconds": no_q2["seconds"],
            "workq_seconds": workq["seconds"], "workq_switching_seconds": switching["seconds"],
            "speedup": speedup,
            "speedup_of_switching": workq["seconds"] / switching["seconds"],
            "speedup_over_fetch_once": once["seconds"] / workq["seconds"],
            "speedup_over_workq_without_q2": no_q2["seconds"] / workq["seconds"],
            "same_result": same,
        })  # fmt: skip
        table.add_row(
            workload, str(tile), f"{base['seconds']:.4f}", f"{once['seconds']:.4f}",
            f"{no_q2['seconds']:.4f}", f"{workq['seconds']:.4f}", f"{switching['seconds']:.4f}",
            f"{speedup:.2f}", f"{once['seconds'] / workq['seconds']:.2f}",
            f"{no_q2['seconds'] / workq['seconds']:.2f}",
            f"{workq['seconds'] / switching['seconds']:.2f}", "yes" if same else "NO",
        )  # fmt: skip
    console.print(table)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
