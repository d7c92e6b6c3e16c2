"""Micro-measurements of the machine and the runtime, for benchmarks and (later) cost models."""

from __future__ import annotations

import argparse
import json
import runpy
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tilecc import _blas, _core
from tilecc.context import Context
from tilecc.files import replaced_atomically


def dgemm_gflops(threads: int, n: int = 3072, repeats: int = 5) -> float:
    """GFLOP/s of the best of ``repeats`` n x n x n DGEMMs in tilecc's BLAS on ``threads`` BLAS
    threads: the rate the engine's GEMMs are measured against."""
    _blas.ensure_loaded()
    return float(_core.dgemm_gflops(n, threads, repeats))


def dispatch_overhead(threads: int, tasks: int = 1_000_000, policy: str = "counter") -> float:
    """Seconds per task of running empty tasks through the executor: the scheduling cost every
    real task pays on top of its work."""
    ctx = Context(threads=threads, policy=policy)
    run = _core.run_empty_tasks(tasks, ctx.executor)
    return float(run.seconds) / tasks


def _commit() -> str:
    """The checkout's commit (with "+dirty" when it has changes), or "unknown" outside one."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def add_results_option(parser: argparse.ArgumentParser, script: str) -> None:
    """``--json PATH``: where a benchmark appends its records, by default its file in
    ``benchmarks/results/`` (``benchmarks/NAME/run.py`` appends to ``results/NAME.jsonl``)."""
    here = Path(script).resolve().parent
    default = here.parent / "results" / f"{here.name}.jsonl"
    parser.add_argument(
        "--json",
        type=Path,
        default=default,
        help=f"append the JSON-lines records here (default: benchmarks/results/{here.name}.jsonl)",
    )


def write_json_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Append benchmark records to ``path``, one JSON object per line, each with what it was
    measured on (date, commit, machine and BLAS: wisdom.machine_key). The file is rewritten
    atomically, old lines first: an interrupted benchmark never leaves a truncated file. In
    ``benchmarks/results/``, the table of the latest results (``benchmarks/RESULTS.md``) is
    made again from the files."""
    from tilecc import wisdom

    stamp = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "commit": _commit(),
        "machine": wisdom.machine_key(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text() if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    with replaced_atomically(path) as f:
        f.write(old)
        f.writelines(json.dumps({**stamp, **r}) + "\n" for r in records)
    table = path.resolve().parent.parent / "results_table.py"
    if path.resolve().parent.name == "results" and table.is_file():
        runpy.run_path(str(table))["write"]()


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` calls after one warm-up: on a shared machine the
    fastest run is the least disturbed one."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
