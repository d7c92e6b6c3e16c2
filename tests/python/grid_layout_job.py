"""Run under mpiexec by test_mpi.py: a tensor laid out on a processor grid, and the tensors made
like it (Tensor.like, copy). Rank 0 prints each one's owners against tilecc.grids.grid_owners
(computed here from the blocks' tiles) and their layout numbers, as JSON."""

from __future__ import annotations

import json

import tilecc  # noqa: F401  (first: it quiets UCX before MPI loads)

# isort: split
from tilecc import Context, Space, Tensor, grids, mpi


def main() -> None:
    ctx = Context(threads=1, store="mpi")
    o = Space.spatial(4, tile=2, kind="occupied", name="o")
    v = Space.spatial(12, tile=3, kind="virtual", name="v")
    t = Tensor([o, v, o, v], name="t", context=ctx)
    t.fill_random_(seed=3)
    hashed = t.owners
    t.distribute_on_grid_((1, 2, 1, 2), (1, 1, 1, 2))
    shape = t._shape
    expected = grids.grid_owners(
        [shape.block_tiles(b) for b in range(shape.num_blocks)], (1, 2, 1, 2), (1, 1, 1, 2)
    )
    like, copy = Tensor.like(t), t.copy()
    plain = Tensor.like(Tensor([o, v, o, v], name="hashed", context=ctx))
    if mpi.world().leader:
        print(
            json.dumps(
                {
                    "moved": bool((hashed != expected).any()),
                    "on_grid": [bool((x.owners == expected).all()) for x in (t, like, copy)],
                    "layouts": [x.layout for x in (t, like, copy, plain)],
                    "plain_hashed": bool((plain.owners == hashed).all()),
                    "copy_equal": float(abs(copy.to_dense() - t.to_dense()).max()),
                }
            )
        )


if __name__ == "__main__":
    main()
