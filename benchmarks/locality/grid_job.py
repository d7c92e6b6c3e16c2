"""One run of C = A B distributed over a 2 x 2 processor grid (paper 002), under mpiexec with 4
ranks in 2 virtual nodes (run by benchmarks/locality/run.py and test_mpi.py):

    mpiexec -n 4 python grid_job.py M N K TILE

Every block of A (M x K), B (K x N) and C (M x N) is laid out block-cyclically on the grid and
each task runs on the owner of its C block, once with the node-oblivious rank mapping and once
with the node-aware one for this shape (tilecc.grids.node_aware_grid over the words A's and B's
blocks move along the grid's rows and columns). Rank 0 prints, per mapping, the operand bytes
that crossed nodes and that moved at all, what the placement's traffic model counts for the
tensors' owners, the seconds of the contraction (the fastest of three runs after the first), and
the largest error against numpy, as JSON.
"""

from __future__ import annotations

import json
import sys
import time

import tilecc  # noqa: F401  (first: it quiets UCX before MPI loads)

# isort: split
import numpy as np

from tilecc import Context, Space, Tensor, grids, mpi
from tilecc.hypergraph import BlockHypergraph
from tilecc.placement import Placement, Ranks, traffic

GRID = (2, 2)


def run(sizes: list[int], tile: int, node_grid: tuple[int, ...] | None) -> dict[str, float]:
    ctx = Context(threads=1, store="mpi", placement="owner")
    m, n, k = (Space.spatial(size, tile=tile, name=name) for size, name in zip(sizes, "mnk"))
    a, b, c = Tensor([m, k], context=ctx), Tensor([k, n], context=ctx), Tensor([m, n], context=ctx)
    a.fill_random_(seed=1)
    b.fill_random_(seed=2)
    for t in (a, b, c):
        t.distribute_on_grid_(GRID, node_grid)

    def moved() -> tuple[int, int]:
        reads = ctx.runtime.traffic["reads"]
        return int(reads["inter_node"][0]), int(reads["intra_node"][0])

    c["ij"] = a["ik"] * b["kj"]  # the plan built and placed; the second run is counted
    c.context.settle(c)
    seconds, counted = [], []
    for _ in range(3):  # bytes of one run, the fastest of three
        before = moved()
        mpi.communicator().barrier()
        start = time.perf_counter()
        c["ij"] = a["ik"] * b["kj"]
        c.context.settle(c)
        seconds.append(time.perf_counter() - start)
        counted.append([x - y for x, y in zip(moved(), before, strict=True)])
    assert all(run == counted[0] for run in counted)
    inter, intra = counted[0]

    world = mpi.world()
    ranks = Ranks(world.size, world.ranks_per_node)
    (planned,) = [p for p in ctx.runtime.contractions() if p.built]
    h = BlockHypergraph.of_plan(planned.plan)
    by_role = {"a": a.owners, "b": b.owners, "c": c.owners}
    owners = np.array([by_role[role][slot] for role, slot in h.nets])
    placement = Placement("owner", np.asarray(planned.schedule.placement), owners)
    model = traffic(h.operands(), placement, ranks)
    error = float(np.abs(c.to_dense() - a.to_dense() @ b.to_dense()).max())
    return {
        "inter_node": sum(mpi.gather(inter)),
        "moved": sum(mpi.gather(inter)) + sum(mpi.gather(intra)),
        "model_inter_node": model.bytes_inter_node,
        "model_moved": model.bytes_moved,
        "seconds": min(max(run) for run in zip(*mpi.gather(seconds), strict=True)),
        "error": error,
    }


def main() -> None:
    sizes, tile = [int(x) for x in sys.argv[1:4]], int(sys.argv[4])
    per_node = mpi.world().ranks_per_node
    # Words along each grid dimension's fibers: B's blocks move along the columns (dimension 1),
    # A's along the rows (dimension 2).
    words = grids.matmul_words(*sizes, (*GRID, 1))[:2]
    aware = grids.node_aware_grid(GRID, per_node, words).node_grid
    out = {
        "default": run(sizes, tile, None),
        "node_aware": run(sizes, tile, aware),
        "default_node_grid": list(grids.default_node_grid(GRID, per_node)),
        "node_grid": list(aware),
    }
    if mpi.world().leader:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
