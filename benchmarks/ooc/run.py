#!/usr/bin/env python3
"""Out of core: paper 004's CCD sub-computation under a memory budget (1/15 of its arrays, as the
paper's 1 GB of about 15 GB), in core and through the disk store under every staging, and the
small instance of the paper's Figs. 3–4.

    python benchmarks/ooc/run.py [--json PATH] [--scale S] [--threads N] [--ccsd]

Prints, per schedule: bytes read and written over the read-once bound (every block a
contraction touches read once, every block it writes written once), over the LRU cache's, the
time over the in-core time (each run in a process of its own; the schedules' partitioning
included), and the peak RSS of the process over the budget. With --ccsd, also a CCSD job
(benzene/cc-pVTZ by default: --molecule, --basis) under a quarter of its in-core tensor peak.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tilecc import measure
from tilecc.staging import SCHEDULES, lru_io, staging
from tilecc.staging.figures import FIGURE_MEMORY, figure_instance

HERE = Path(__file__).parent
BENZENE = (
    "C 0 1.396792 0; C 1.209657 0.698396 0; C 1.209657 -0.698396 0; C 0 -1.396792 0; "
    "C -1.209657 -0.698396 0; C -1.209657 0.698396 0; H 0 2.484212 0; H 2.151390 1.242106 0; "
    "H 2.151390 -1.242106 0; H 0 -2.484212 0; H -2.151390 -1.242106 0; H -2.151390 1.242106 0"
)


def job(*args: object) -> dict:
    proc = subprocess.run(
        [sys.executable, str(HERE / "job.py"), *map(str, args)], capture_output=True, text=True
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1]
        return {"error": "no read-once schedule fits" if "no read-once" in last else last[:60]}
    return json.loads(lines[-1])


def figure_table() -> Table:
    h = figure_instance()
    table = Table(title="paper 004 Figs. 3-4: 9 tasks, 6 unit blocks, memory 3")
    for col in ("schedule", "blocks read", "over the bound"):
        table.add_column(col, justify="right")
    bound = h.lower_bound()[0]
    for name in SCHEDULES:
        try:
            reads = (
                lru_io(h, FIGURE_MEMORY)[0]
                if name == "lru"
                else (staging(h, FIGURE_MEMORY, name).io(h)[0])
            )
        except ValueError:
            table.add_row(name, "none fits", "")
            continue
        table.add_row(name, str(reads), f"{reads / bound:.2f}")
    return table


def rows(title: str, records: list[dict], budget: int) -> Table:
    table = Table(title=title)
    for col in ("schedule", "GB read", "GB written", "/bound", "/LRU", "s", "/in core",
                "peak RSS MB", "/budget", "job peak / (process + budget)", "check"):  # fmt: skip
        table.add_column(col, justify="right")
    in_core = next(r for r in records if r["schedule"] == "in core")
    lru = next((r for r in records if r["schedule"] == "lru" and "error" not in r), None)
    for r in records:
        if "error" in r:
            table.add_row(r["schedule"], f"[red]{r['error']}")
            continue
        moved = r["bytes_read"] + r["bytes_written"]
        bound = r["lower_bound_bytes"]
        check = r.get("checksum", r.get("e_corr"))
        reference = in_core.get("checksum", in_core.get("e_corr"))
        same = abs(check - reference) <= 1e-10 * max(1.0, abs(reference))
        table.add_row(
            r["schedule"],
            f"{r['bytes_read'] / 1e9:.3f}",
            f"{r['bytes_written'] / 1e9:.3f}",
            f"{moved / bound:.2f}" if bound else "",
            f"{moved / (lru['bytes_read'] + lru['bytes_written']):.2f}" if lru and bound else "",
            f"{r['seconds']:.2f}",
            f"{r['seconds'] / in_core['seconds']:.2f}",
            f"{r['peak_rss_bytes'] / 2**20:.0f}",
            f"{r['peak_rss_bytes'] / budget:.2f}" if r["schedule"] != "in core" else "",
            f"{r['job_peak_rss_bytes'] / (r['process_bytes'] + budget):.2f}"
            if "process_bytes" in r and r["schedule"] != "in core"
            else "",
            "same" if same else f"[red]{check}",
        )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--scale", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ccsd", action="store_true")
    parser.add_argument("--molecule", default=BENZENE)
    parser.add_argument("--basis", default="cc-pvtz")  # the case; cc-pvdz runs in a minute
    args = parser.parse_args()
    console = Console(width=150)
    console.print(figure_table())
    records = []
    in_core = {"schedule": "in core", **job("ccd", args.scale, "memory", "lru", 0, args.threads)}
    budget = in_core["arrays_bytes"] // 15
    records.append(in_core)
    for name in SCHEDULES:
        result = job("ccd", args.scale, "disk", name, budget, args.threads)
        records.append({"schedule": name, **result})
    for r in records:
        r.update(workload="ccd", scale=args.scale, budget_bytes=budget, threads=args.threads)
    console.print(
        rows(
            f"CCD sub-computation, scale {args.scale}, budget {budget / 1e6:.0f} MB "
            f"(arrays {in_core['arrays_bytes'] / 1e6:.0f} MB)",
            records,
            budget,
        )
    )
    if args.ccsd:
        base = ("ccsd", args.molecule, args.basis)
        ccsd_core = {"schedule": "in core", **job(*base, "memory", "lru", 0, args.threads)}
        budget = ccsd_core["tensor_high_water_bytes"] // 4
        ccsd = [ccsd_core] + [
            {"schedule": name, **job(*base, "disk", name, budget, args.threads)}
            for name in ("lru", "two-level")
        ]
        for r in ccsd:
            r.update(workload="ccsd", basis=args.basis, budget_bytes=budget, threads=args.threads)
        console.print(rows(f"CCSD/{args.basis}, budget {budget / 1e6:.0f} MB", ccsd, budget))
        records += ccsd
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
