#!/usr/bin/env python3
"""Distributed CCSD: one N2/cc-pVTZ iteration at 1, 2 and 4 ranks (1 thread each,
oversubscribed on a small machine) and with 2 virtual nodes, under every policy.

    python benchmarks/mpi/run.py [--json PATH] [--ranks 1 2 4]

Prints, per run: the iteration's time and its ratio to `tce` at the same ranks and nodes, bytes
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


def run(ranks: int, per_node: int | None, policy: str) -> dict:
    env = {**os.environ, "TILECC_RANKS_PER_NODE": str(per_node or "")}
    command = [sys.executable, str(HERE / "job.py"), policy]
    if ranks > 1 or per_node:
        command = [str(BIN / "mpiexec"), "-n", str(ranks), *command]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr or proc.stdout)[-300:]}
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    layouts = [(r, None) for r in args.ranks] + [(4, 2)] * (4 in args.ranks)
    records = []
    for ranks, per_node in layouts:
        for policy in _core.policy_names():
            result = run(ranks, per_node, policy)
            records.append({"ranks": ranks, "ranks_per_node": per_node, "policy": policy, **result})

    def one_rank(key: str) -> float:
        return max(
            (max(r[key]) for r in records if r["ranks"] == 1 and "error" not in r),
            default=float("nan"),
        )

    base_rss, base_tensors = one_rank("peak_rss_mb_per_rank"), one_rank("tensor_mb_per_rank")
    table = Table(title="one CCSD iteration of N2/cc-pVTZ, 1 thread per rank")
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
    Console().print(table)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
