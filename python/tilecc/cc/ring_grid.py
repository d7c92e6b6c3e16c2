"""drCCD's ring terms on a processor grid (paper 002): on several ranks, every [o, v, o, v] tensor
of a drCCD job is laid out block-cyclically over a 2D grid of its virtual indices, (1, p_r, 1,
p_c), so that each ring product R_iajb = Σ_kc X_iakc Y_kcjb is a matrix multiplication whose
rows and columns are cut over the grid, and owner-computes moves A's blocks along grid rows and
B's along grid columns, as the 2D algorithm does.

Each node holds a box of the grid: ``default`` numbers ranks node-obliviously (consecutive ranks,
first dimension fastest), ``node-aware`` takes the box of least inter-node volume by exhaustive
search (tilecc.grids.node_aware_grid) over the words the products move along each dimension.

Paper 002's example, 64 ranks in nodes of 8 (an 8 x 8 grid): a node-oblivious node holds a
column of 8 and each row product crosses 7 nodes; a 2 x 4 box cuts the volume from 7W to 4W.

>>> RingGrid.choose("default", occupied=10, virtual=40, ranks=64, per_node=8)
RingGrid(grid=(1, 8, 1, 8), node_grid=(1, 8, 1, 1))
>>> RingGrid.choose("node-aware", occupied=10, virtual=40, ranks=64, per_node=8).node_grid
(1, 2, 1, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc import grids
from tilecc.tensor import Tensor

#: The grid kinds, as `tilecc run --grid` and DRCCD(grid=...) take them.
KINDS = ("default", "node-aware")


def check_kind(kind: str | None, ranks: int) -> None:
    """Refuse, in one sentence, a grid kind that is not one, or a grid in one process."""
    if kind is None:
        return
    if kind not in KINDS:
        raise ValueError(f"unknown grid '{kind}'; the grids are: {', '.join(KINDS)}.")
    if ranks < 2:
        raise ValueError(
            f"grid '{kind}' lays tensors out over several ranks and this job has one; run it "
            f"under mpiexec -n P with P > 1, or leave the grid out."
        )


@dataclass(frozen=True)
class RingGrid:
    """The processor grid over the indices (i, a, j, b) and each node's box of it."""

    grid: tuple[int, ...]
    node_grid: tuple[int, ...]

    @classmethod
    def choose(
        cls, kind: str, *, occupied: int, virtual: int, ranks: int, per_node: int
    ) -> RingGrid:
        """The grid a node-oblivious library picks for the (ov) x (ov) products (least total
        volume, no K split), with each node's box by ``kind``."""
        side = occupied * virtual
        rows, cols, _ = grids.processor_grid(side, side, side, ranks, split_k=False)
        grid = (1, rows, 1, cols)
        if kind == "default":
            return cls(grid, grids.default_node_grid(grid, per_node))
        along_rows, along_cols, _ = grids.matmul_words(side, side, side, (rows, cols, 1))
        words = (0.0, along_rows, 0.0, along_cols)
        return cls(grid, grids.node_aware_grid(grid, per_node, words).node_grid)

    def lay_out(self, tensor: Tensor) -> Tensor:
        """Move the tensor's blocks to their grid owners (collective); returns it."""
        tensor.distribute_on_grid_(self.grid, self.node_grid)
        return tensor
