#!/usr/bin/env python3
"""Distributed CCSD: one N2/cc-pVTZ iteration (or, with --workload ccd, paper 004's CCD
sub-computation) at 1, 2 and 4 ranks (1 thread each, oversubscribed on a small machine) and with
2 virtual nodes, under every policy.

    python benchmarks/mpi/run.py [--json PATH] [--ranks 1 2 4] [--workload ccsd|ccd]

Prints first the MPI path on one rank over a plain process, and 2 ranks x 1 thread over 1 rank x
2 threads. Then, per run: the iteration's time and its ratio to `tce` at the same ranks and
nodes, bytes
moved by class (this process, another rank of the node, another node), remote gets, counter
fetches per task, the largest per-rank high-water mark of the distributed tensors and the
largest per-rank peak memory of the process, each against the 1-rank figure.
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

from tilecc import _core, measure

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent


def run(workload: str, ranks: int, per_node: int | None, policy: str, threads: int = 1) -> dict:
    env = {**os.environ, "TILECC_RANKS_PER_NODE": str(per_node or "")}
    command = [sys.executable, str(HERE / "job.py"), workload, policy, str(threads)]
    if ranks > 1 or per_node:
        command = [str(BIN / "mpiexec"), "-n", str(ranks), *command]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr or proc.stdout)[-300:]}
    return json.loads(lines[-1])


def layout_table(workload: str) -> Table:
    """The MPI path on one rank (MPI initialised, TILECC_RANKS_PER_NODE=1) against one plain
    process, and 2 ranks x 1 thread against 1 rank x 2 threads, policy counter, alternating
    three times (best of each)."""
    best: dict[str, float] = {}
    for _ in range(3):
        for name, ranks, per_node, threads in (
            ("plain, 1 thread", 1, None, 1),
            ("MPI, 1 rank", 1, 1, 1),
            ("1 rank x 2 threads", 1, None, 2),
            ("2 ranks x 1 thread", 2, None, 1),
        ):
            result = run(workload, ranks, per_node, "counter", threads)
            seconds = result.get("iteration_s", float("nan"))
            best[name] = min(best.get(name, float("inf")), seconds)
    table = Table(title=f"{workload}: layouts on this machine (best of 3, policy counter)")
    for col in ("layout", "s", "ratio", "over"):
        table.add_column(col, justify="right")
    for name, over in (("MPI, 1 rank", "plain, 1 thread"),
                       ("2 ranks x 1 thread", "1 rank x 2 threads")):  # fmt: skip
        table.add_row(over, f"{best[over]:.3f}", "", "")
        table.add_row(name, f"{best[name]:.3f}", f"{best[name] / best[over]:.2f}", over)
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--workload", choices=["ccsd", "ccd"], default="ccsd")
    args = parser.parse_args()
    console = Console(width=150)
    console.print(layout_table(args.workload))
    layouts = [(r, None) for r in args.ranks] + [(4, 2)] * (4 in args.ranks)
    records = []
    for ranks, per_node in layouts:
        for policy in _core.policy_names():
            result = run(args.workload, ranks, per_node, policy)
            records.append(
                {"workload": args.workload, "ranks": ranks, "ranks_per_node": per_node,
                 "policy": policy, **result}
            )  # fmt: skip

    def one_rank(key: str) -> float:
        return max(
            (max(r[key]) for r in records if r["ranks"] == 1 and "error" not in r),
            default=float("nan"),
        )

    base_rss, base_tensors = one_rank("peak_rss_mb_per_rank"), one_rank("tensor_mb_per_rank")
    what = {"ccsd": "one CCSD iteration of N2/cc-pVTZ", "ccd": "paper 004 CCD sub-computation"}
    table = Table(title=f"{what[args.workload]}, 1 thread per rank")
    for col in ("ranks", "nodes", "policy", "s", "/tce", "MB local", "MB intra", "MB inter",
                "gets", "fetch/task", "tensor MB/rank", "/1 rank", "peak MB/rank",
                "/1 rank"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in records:
        nodes = r["ranks"] // r["ranks_per_node"] if r["ranks_per_node"] else 1
        if "error" in r:
            table.add_row(str(r["ranks"]), str(nodes), r["policy"], f"[red]{r['error'][:50]}")
            continue
        tce = next(
            (x for x in records if x["ranks"] == r["ranks"] and x["ranks_per_node"] ==
             r["ranks_per_node"] and x["policy"] == "tce" and "error" not in x), None,
        )  # fmt: skip
        c = r["communication"]
        peak, tensors = max(r["peak_rss_mb_per_rank"]), max(r["tensor_mb_per_rank"])
        table.add_row(
            str(r["ranks"]),
            str(nodes),
            r["policy"],
            f"{r['iteration_s']:.3f}",
            f"{r['iteration_s'] / tce['iteration_s']:.2f}" if tce else "",
            f"{c['bytes_local'] / 1e6:.1f}",
            f"{c['bytes_intra_node'] / 1e6:.1f}",
            f"{c['bytes_inter_node'] / 1e6:.1f}",
            str(c["gets"]),
            f"{r['counter_calls_per_task']:.2f}",
            f"{tensors:.1f}",
            f"{tensors / base_tensors:.2f}",
            f"{peak:.0f}",
            f"{peak / base_rss:.2f}",
        )
    console.print(table)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
