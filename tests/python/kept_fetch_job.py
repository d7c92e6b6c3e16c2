"""Run under mpiexec by test_mpi.py: one contraction whose tasks share operand blocks, its tasks
placed by the placement named in argv[1]. Each rank counts the remote operand bytes it got; rank
0 prints them with what the placement's traffic model counts (each block once per rank that uses
it away from its owner) and the largest error against numpy.einsum, as JSON."""

from __future__ import annotations

import json
import sys

import tilecc  # noqa: F401  (first: it quiets UCX before MPI loads)

# isort: split
import numpy as np

from tilecc import Context, Space, Tensor, mpi
from tilecc.hypergraph import BlockHypergraph
from tilecc.placement import Placement, Ranks, traffic
from tilecc.placement.schemes import hash_owners


def main(placement_name: str) -> None:
    ctx = Context(threads=2, store="mpi", placement=placement_name)
    o = Space.spatial(8, tile=2, kind="occupied", name="o")
    v = Space.spatial(12, tile=3, kind="virtual", name="v")
    t2 = Tensor([o, o, v, v], name="t2", context=ctx)
    w = Tensor([v, v, v, v], name="w", context=ctx)
    r2 = Tensor([o, o, v, v], name="r2", context=ctx)
    t2.fill_random_(seed=1)
    w.fill_random_(seed=2)

    def remote_reads() -> int:
        reads = ctx.runtime.traffic["reads"]
        return int(reads["intra_node"][0]) + int(reads["inter_node"][0])

    before = remote_reads()
    r2["ijab"] = t2["ijcd"] * w["abcd"]
    r2.context.settle(r2)
    got = remote_reads() - before

    world = mpi.world()
    ranks = Ranks(world.size, world.ranks_per_node)
    (planned,) = [p for p in ctx.runtime.contractions() if p.built]
    h = BlockHypergraph.of_plan(planned.plan)
    owners = hash_owners(h, ranks)
    placement = Placement(placement_name, np.asarray(planned.schedule.placement), owners)
    # The model's moved bytes of the operands alone (the output's are accumulates, not gets).
    model = traffic(h.operands(), placement, ranks)
    error = float(
        np.abs(r2.to_dense() - np.einsum("ijcd,abcd->ijab", t2.to_dense(), w.to_dense())).max()
    )
    counts = mpi.gather(got)
    if world.leader:
        print(json.dumps({"got": sum(counts), "model": int(model.bytes_moved), "error": error}))


if __name__ == "__main__":
    main(sys.argv[1])
