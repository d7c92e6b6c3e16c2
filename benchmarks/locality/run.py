#!/usr/bin/env python3
"""Locality-aware placement (paper 004, section 5), evaluated without running a task: paper 004's
C[a,b,c,d] = A[a,b,i] B[i,c,d] with a, b, c, d over O = 160 in symmetry segments (80, 40, 20, 20)
and i over V = k·O, at P = 8, 32 and 64 (virtual) ranks, under each placement: bytes moved
between ranks and load imbalance, counted exactly from the plan's task–block hypergraph.

    python benchmarks/locality/run.py [--json PATH] [--k 1 4 16] [--ranks 8 32 64]

Then node-aware processor grids (paper 002): its matrix-multiplication shapes (square, large K,
large M, small K, edge ratio 10) and drCCD's ring term, on 64 ranks in nodes of 8: the
node-oblivious grid's inter-node words against the node-aware intra-node grid's, and what
redistributing to it moves. And the same shapes (edge ratio 10, smaller) run for real on a 2 x 2
grid of 4 ranks in 2 virtual nodes (grid_job.py, 20 us and 1 GB/s emulated between them): the
operand bytes measured crossing nodes under each mapping, against the traffic model's count, and
the contraction's time. Last, a whole drCCD job under mpiexec with its tensors on the store's
hash owners or on a processor grid (`tilecc run --grid`): the bytes it moved and its CC time.

Labels here: O's indices are i, j, k, l and V's is a (the paper's a, b, c, d and i); the plan is
tilecc's own (tiles of 20 over O and 20·k over V, one task per output block or stack of them).
Rows: hash, random, owner and hypergraph with blocks placed by the placement (the paper's
setting, where data and tasks are mapped together); "hypergraph, hash blocks" keeps the blocks
on the mpi store's hash owners and places the tasks only (what a run does with tensors that
already exist); and, in nodes of 8 ranks, hash against the two-level hypergraph placement
(nodes first) by inter-node bytes. Targets (P = 32, k = 4 and 16): hypergraph at most 0.5x
random's bytes and 0.8x owner's, imbalance at most 5%.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import tilecc
from tilecc import measure
from tilecc.grids import (
    default_node_grid,
    inter_node_volume,
    matmul_words,
    node_aware_grid,
    processor_grid,
    redistribution_words,
)
from tilecc.hypergraph import BlockHypergraph
from tilecc.placement import Ranks, place, traffic
from tilecc.placement.schemes import hash_owners
from tilecc.testing import run_results

SEGMENTS = (80, 40, 20, 20)
NODE = 8
#: Paper 002's shapes (M, N, K) at edge ratio 10, and drCCD's ring term R[ai,bj] = V[ai,ck] T[ck,bj]
#: with o = 40, v = 400 (M = N = K = o v).
SHAPES = {
    "square": (8000, 8000, 8000),
    "large K": (8000, 8000, 80000),
    "large M": (80000, 8000, 8000),
    "small K": (8000, 8000, 800),
    "drCCD ring (o 40, v 400)": (16000, 16000, 16000),
}


def grid_rows(console: Console, records: list[dict]) -> None:
    table = Table(title=f"Node-aware grids: 64 ranks in nodes of {NODE}, inter-node words")
    for col in ("shape", "grid", "default node grid", "default", "node-aware node grid",
                "node-aware", "ratio", "redistribution"):  # fmt: skip
        table.add_column(col, justify="right")
    for name, (m, n, k) in SHAPES.items():
        grid = processor_grid(m, n, k, 64)
        words = matmul_words(m, n, k, grid)
        default = default_node_grid(grid, NODE)
        v_default = inter_node_volume(grid, default, words)
        best = node_aware_grid(grid, NODE, words)
        moved = redistribution_words(grid, best.node_grid, (m * k + k * n + m * n) / 64)
        records.append({
            "case": "node-aware grid", "shape": name, "m": m, "n": n, "k": k, "ranks": 64,
            "ranks_per_node": NODE, "grid": list(grid), "default_node_grid": list(default),
            "default_words": v_default, "node_grid": list(best.node_grid),
            "node_aware_words": best.volume, "redistribution_words": moved,
        })  # fmt: skip
        table.add_row(
            name, "x".join(map(str, grid)), "x".join(map(str, default)), f"{v_default:.3g}",
            "x".join(map(str, best.node_grid)), f"{best.volume:.3g}",
            f"{best.volume / v_default:.2f}" if v_default else "-", f"{moved:.3g}",
        )  # fmt: skip
    console.print(table)


#: The shapes run for real (M, N, K) at edge ratio 10, in tiles of RUN_TILE.
RUN_SHAPES = {
    "square": (40, 40, 40),
    "large K": (40, 40, 400),
    "large M": (400, 40, 40),
    "small K": (40, 40, 4),
}
RUN_TILE = 8
#: The network emulated between the virtual nodes of the grid runs, so that their times show
#: what crossing nodes costs (1 GB/s: 0.1 ms for the large-M default's 128 kB).
NETWORK = {"TILECC_NET_LATENCY_US": "20", "TILECC_NET_GBPS": "1"}


def grid_runs(console: Console, records: list[dict]) -> None:
    table = Table(
        title="C = A B on a 2 x 2 grid, 4 ranks in 2 virtual nodes (20 us, 1 GB/s between them)"
    )
    for col in ("shape", "node grids", "inter-node, default", "inter-node, node-aware",
                "ratio", "moved in all", "= model", "seconds default / aware"):  # fmt: skip
        table.add_column(col, justify="right")
    job = Path(__file__).with_name("grid_job.py")
    mpiexec = Path(sys.executable).with_name("mpiexec")
    for name, (m, n, k) in RUN_SHAPES.items():
        proc = subprocess.run(
            [str(mpiexec), "-n", "4", sys.executable, str(job), str(m), str(n), str(k),
             str(RUN_TILE)],
            capture_output=True, text=True, timeout=600, check=False,
            env={**os.environ, "TILECC_RANKS_PER_NODE": "2", **NETWORK},
        )  # fmt: skip
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            raise SystemExit(f"the grid run of {name} failed: {proc.stderr[-500:]}")
        out = json.loads(lines[-1])
        default, aware = out["default"], out["node_aware"]
        exact = all(
            r["inter_node"] == r["model_inter_node"] and r["moved"] == r["model_moved"]
            for r in (default, aware)
        )
        records.append({
            "case": "grid run", "shape": name, "m": m, "n": n, "k": k, "tile": RUN_TILE,
            "ranks": 4, "ranks_per_node": 2, "grid": [2, 2],
            "default_node_grid": out["default_node_grid"], "node_grid": out["node_grid"],
            "default_inter_node_bytes": default["inter_node"],
            "node_aware_inter_node_bytes": aware["inter_node"], "moved_bytes": aware["moved"],
            "equals_model": exact, "default_seconds": default["seconds"],
            "node_aware_seconds": aware["seconds"],
            "error": max(default["error"], aware["error"]), "network": NETWORK,
        })  # fmt: skip
        table.add_row(
            name, f"{'x'.join(map(str, out['default_node_grid']))} / "
            f"{'x'.join(map(str, out['node_grid']))}", str(default["inter_node"]),
            str(aware["inter_node"]),
            f"{aware['inter_node'] / default['inter_node']:.2f}" if default["inter_node"] else "-",
            str(aware["moved"]), "yes" if exact else "NO",
            f"{default['seconds']:.4f} / {aware['seconds']:.4f}",
        )  # fmt: skip
    console.print(table)


#: The drCCD job run on a grid: dense (no point-group symmetry), so that its ring terms are
#: matrix products of (ov) x (ov) matrices, as paper 002 distributes them.
DRCCD_JOB = ("water.xyz", "cc-pvtz", "8")


def drccd_job_runs(console: Console, records: list[dict]) -> None:
    """A whole drCCD job (`tilecc run --method drccd`) on 4 ranks in 2 virtual nodes, its tensors
    on the mpi store's hash owners (tasks shared by the counter) or on a 2 x 2 grid of their
    virtual indices (tasks on their output block's owner), node-obliviously or node-aware."""
    molecule, basis, tile = DRCCD_JOB
    table = Table(
        title=f"drCCD {molecule}/{basis} (no symmetry, tile {tile}), 4 ranks in 2 virtual "
        "nodes (20 us, 1 GB/s between them): the whole job"
    )
    for col in ("layout", "inter-node MB", "intra-node MB", "/ hash", "CC s", "E(corr)"):
        table.add_column(col, justify="right")
    path = Path(__file__).parents[2] / "examples" / "molecules" / molecule
    tilecc_bin = Path(sys.executable).with_name("tilecc")
    mpiexec = Path(sys.executable).with_name("mpiexec")
    hash_bytes = None
    for layout in ("hash", "default", "node-aware"):
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"tilecc-drccd-grid-{os.getpid()}.json"
        grid = [] if layout == "hash" else ["--grid", layout]
        proc = subprocess.run(
            [str(mpiexec), "-n", "4", str(tilecc_bin), "run", str(path), "--basis", basis,
             "--no-symmetry", "--method", "drccd", "--tile", tile, "--threads", "1", *grid,
             "--json", str(out), "-q"],
            capture_output=True, text=True, timeout=900, check=False,
            env={**os.environ, "TILECC_RANKS_PER_NODE": "2", **NETWORK},
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"the drCCD run on {layout} failed: {proc.stdout[-500:]}")
        job = run_results(out)
        out.unlink()
        moved = job["communication"]
        hash_bytes = hash_bytes or moved["bytes_inter_node"]
        records.append({
            "case": "drccd job", "molecule": molecule, "basis": basis, "tile": int(tile),
            "ranks": 4, "ranks_per_node": 2, "layout": layout, "grid": job["grid"],
            "inter_node_bytes": moved["bytes_inter_node"],
            "intra_node_bytes": moved["bytes_intra_node"], "cc_seconds": job["timings"]["cc"],
            "e_corr": job["e_corr"], "network": NETWORK,
        })  # fmt: skip
        table.add_row(
            layout, f"{moved['bytes_inter_node'] / 1e6:.1f}",
            f"{moved['bytes_intra_node'] / 1e6:.1f}",
            f"{moved['bytes_inter_node'] / hash_bytes:.2f}", f"{job['timings']['cc']:.2f}",
            f"{job['e_corr']:.10f}",
        )  # fmt: skip
    console.print(table)


def hypergraph(k: int) -> BlockHypergraph:
    """The plan of C[ijkl] = A[ija] B[akl], planned only (store "none": no tensor is stored)."""
    ctx = tilecc.Context(threads=1, store="none")

    def space(kind: str, name: str, scale: int) -> tilecc.Space:
        irreps = [g for g, n in enumerate(SEGMENTS) for _ in range(n * scale)]
        return tilecc.Space(irreps, tile=20 * scale, kind=kind, name=name)

    o, v = space("occupied", "O", 1), space("virtual", "V", k)
    a = tilecc.Tensor([o, o, v], name="A", context=ctx)
    b = tilecc.Tensor([v, o, o], name="B", context=ctx)
    c = tilecc.Tensor([o, o, o, o], name="C", context=ctx)
    return BlockHypergraph.of_plan(tilecc.plan_for(c["ijkl"], a["ija"] * b["akl"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--k", type=int, nargs="+", default=list(range(1, 17)))
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 32, 64])
    args = parser.parse_args()
    console = Console()
    table = Table(title="C[abcd] = A[abi] B[icd]: bytes moved per placement (no task run)")
    for col in (
        "k",
        "P",
        "placement",
        "tasks",
        "MB moved",
        "inter-node MB",
        "imbalance",
        "/ random",
        "/ owner",
        "partition s",
    ):
        table.add_column(col, justify="right")
    records = []
    for k in args.k:
        h = hypergraph(k)
        for p in args.ranks:
            flat, nodes = Ranks(p), Ranks(p, NODE) if p % NODE == 0 else None
            cases = [(name, flat, None) for name in ("hash", "random", "owner", "hypergraph")]
            cases.append(("hypergraph, hash blocks", flat, hash_owners(h, flat)))
            if nodes is not None:
                cases += [
                    (f"{name}, nodes of {NODE}", nodes, None) for name in ("hash", "hypergraph")
                ]
            results = []
            for label, ranks, owners in cases:
                start = time.perf_counter()
                placement = place(h, label.split(",")[0], ranks, owners)
                results.append(
                    (label, ranks, traffic(h, placement, ranks), time.perf_counter() - start)
                )
            moved = {label: t.bytes_moved for label, _, t, _ in results}
            for label, ranks, t, seconds in results:
                ratio = {base: t.bytes_moved / max(moved[base], 1) for base in ("random", "owner")}
                record = {
                    "case": "C[abcd]",
                    "k": k,
                    "ranks": p,
                    "ranks_per_node": ranks.per_node,
                    "placement": label,
                    "tasks": h.tasks,
                    "bytes_moved": t.bytes_moved,
                    "bytes_intra_node": t.bytes_intra_node,
                    "bytes_inter_node": t.bytes_inter_node,
                    "bytes_local": t.bytes_local,
                    "imbalance": t.imbalance,
                    "over_random": ratio["random"],
                    "over_owner": ratio["owner"],
                    "partition_seconds": seconds,
                }
                records.append(record)
                table.add_row(
                    str(k),
                    str(p),
                    label,
                    str(h.tasks),
                    f"{t.bytes_moved / 1e6:.1f}",
                    f"{t.bytes_inter_node / 1e6:.1f}",
                    f"{100 * t.imbalance:.1f}%",
                    f"{ratio['random']:.2f}",
                    f"{ratio['owner']:.2f}",
                    f"{seconds:.2f}",
                )
            table.add_section()
    console.print(table)
    target = [
        r
        for r in records
        if r["ranks"] == 32 and r["k"] in (4, 16) and r["placement"] == "hypergraph"
    ]
    for r in target:
        met = r["over_random"] <= 0.5 and r["over_owner"] <= 0.8 and r["imbalance"] <= 0.05
        console.print(
            f"P = 32, k = {r['k']}: hypergraph/random {r['over_random']:.2f} (<= 0.5), "
            f"hypergraph/owner {r['over_owner']:.2f} (<= 0.8), imbalance "
            f"{100 * r['imbalance']:.1f}% (<= 5%): {'met' if met else 'NOT met'}"
        )
    grid_rows(console, records)
    grid_runs(console, records)
    drccd_job_runs(console, records)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
