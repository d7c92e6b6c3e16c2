"""Node-aware processor grids (paper 002): for a contraction distributed over a processor grid
p1 × … × pd, whose algorithm broadcasts or reduces W_i words along the fibers of dimension i,
choose the intra-node grid m1 × … × md (m1···md = ranks per node m, p_i divisible by m_i) that
minimises the volume crossing nodes,

    V = Σ_i W_i (p_i / m_i − 1),

since a fiber of p_i ranks then spans p_i / m_i nodes. The search is exhaustive over the
factorisations of m, as the paper's. The node-oblivious default is what numbering ranks with the
first dimension fastest gives: consecutive ranks share a node, so a node covers the first
dimensions first.

>>> best = node_aware_grid((8, 8), 8, (1.0, 1.0))       # paper 002's example: 64 ranks, nodes of 8
>>> default = default_node_grid((8, 8), 8)
>>> default, inter_node_volume((8, 8), default, (1.0, 1.0))
((8, 1), 7.0)
>>> best.node_grid, best.volume
((2, 4), 4.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np


def _check(grid: Sequence[int], per_node: int) -> None:
    if not grid or any(not isinstance(p, int) or p < 1 for p in grid):
        raise ValueError(f"a processor grid is positive whole numbers of ranks, not {grid!r}.")
    if per_node < 1 or math.prod(grid) % per_node:
        raise ValueError(
            f"nodes of {per_node} ranks do not divide the {math.prod(grid)} ranks of the grid "
            f"{' x '.join(map(str, grid))}; give ranks per node that divide the ranks."
        )


def node_grids(grid: Sequence[int], per_node: int) -> Iterator[tuple[int, ...]]:
    """Every intra-node grid (m_1, …, m_d): m_1···m_d = per_node and m_i divides p_i."""
    _check(grid, per_node)

    def rest(dim: int, left: int) -> Iterator[tuple[int, ...]]:
        if dim == len(grid) - 1:
            if grid[dim] % left == 0:
                yield (left,)
            return
        for m in range(1, left + 1):
            if left % m == 0 and grid[dim] % m == 0:
                for tail in rest(dim + 1, left // m):
                    yield (m, *tail)

    yield from rest(0, per_node)


def inter_node_volume(
    grid: Sequence[int], node_grid: Sequence[int], words: Sequence[float]
) -> float:
    """V = Σ W_i (p_i / m_i − 1): the words crossing nodes when fiber i spans p_i / m_i nodes."""
    return sum(w * (p // m - 1) for p, m, w in zip(grid, node_grid, words, strict=True))


def default_node_grid(grid: Sequence[int], per_node: int) -> tuple[int, ...]:
    """The intra-node grid of the node-oblivious mapping (ranks numbered with the first
    dimension fastest, consecutive ranks on one node): the first dimensions fill a node first."""
    _check(grid, per_node)
    left, out = per_node, []
    for p in grid:
        m = math.gcd(p, left)
        out.append(m)
        left //= m
    if left != 1:
        raise ValueError(
            f"consecutive ranks do not make a box of the grid {' x '.join(map(str, grid))} in "
            f"nodes of {per_node}; no default mapping to compare against."
        )
    return tuple(out)


@dataclass(frozen=True)
class NodeGrid:
    """An intra-node grid and the inter-node volume it gives."""

    node_grid: tuple[int, ...]
    volume: float


def node_aware_grid(grid: Sequence[int], per_node: int, words: Sequence[float]) -> NodeGrid:
    """The intra-node grid of least inter-node volume (the first in enumeration order among
    equals), by exhaustive search."""
    if len(words) != len(grid):
        raise ValueError(f"{len(words)} word counts for a grid of {len(grid)} dimensions.")
    return min(
        (NodeGrid(m, inter_node_volume(grid, m, words)) for m in node_grids(grid, per_node)),
        key=lambda g: g.volume,
    )


def choose_node_grid(
    grid: Sequence[int],
    per_node: int,
    words: Sequence[float],
    words_per_rank: float,
    runs: int = 1,
) -> NodeGrid:
    """The default mapping's intra-node grid, or the node-aware one when its volume over ``runs``
    executions of the contraction, plus the one redistribution of ``words_per_rank`` words per
    rank that reaching it takes, is smaller (paper 002 counts redistribution in its model)."""
    default = default_node_grid(grid, per_node)
    best = node_aware_grid(grid, per_node, words)
    stay = runs * inter_node_volume(grid, default, words)
    move = runs * best.volume + redistribution_words(grid, best.node_grid, words_per_rank)
    return best if move < stay else NodeGrid(default, inter_node_volume(grid, default, words))


def grid_rank(position: Sequence[int], grid: Sequence[int], node_grid: Sequence[int]) -> int:
    """The rank at a grid position when each node (of m_1···m_d consecutive ranks) holds an
    m_1 × … × m_d box of the grid: nodes, and ranks within a node, numbered with the first
    dimension fastest. With the default node grid it is the node-oblivious numbering.

    >>> [grid_rank((i, j), (2, 2), (2, 1)) for j in range(2) for i in range(2)]
    [0, 1, 2, 3]
    >>> [grid_rank((i, j), (2, 2), (1, 2)) for j in range(2) for i in range(2)]
    [0, 2, 1, 3]
    """
    node = local = 0
    node_stride = local_stride = 1
    for c, p, m in zip(position, grid, node_grid, strict=True):
        node += (c // m) * node_stride
        node_stride *= p // m
        local += (c % m) * local_stride
        local_stride *= m
    return node * math.prod(node_grid) + local


def _mapping(grid: Sequence[int], node_grid: Sequence[int]) -> list[int]:
    """The node of each rank of the grid (ranks numbered with the first dimension fastest) when
    nodes are boxes of node_grid, numbered with the first dimension fastest too."""
    node_of = []
    for rank in range(math.prod(grid)):
        coords, r = [], rank
        for p in grid:
            coords.append(r % p)
            r //= p
        node_of.append(grid_rank(coords, grid, node_grid) // math.prod(node_grid))
    return node_of


def redistribution_words(
    grid: Sequence[int], node_grid: Sequence[int], words_per_rank: float
) -> float:
    """Words crossing nodes to move from the default mapping to ``node_grid``'s: every rank whose
    grid position lands on another node sends its data (``words_per_rank``) there, in one round
    of point-to-point messages."""
    before = _mapping(grid, default_node_grid(grid, math.prod(node_grid)))
    after = _mapping(grid, node_grid)
    # Nodes keep their numbers only up to a relabelling: the ranks that stay are the most a
    # one-to-one matching of old nodes to new ones keeps together (an assignment problem).
    from scipy.optimize import linear_sum_assignment

    nodes = max(before) + 1
    together = np.zeros((nodes, nodes))
    for b, a in zip(before, after, strict=True):
        together[b, a] += 1
    rows, cols = linear_sum_assignment(-together)
    kept = int(together[rows, cols].sum())
    return (len(before) - kept) * words_per_rank


def matmul_words(m: int, n: int, k: int, grid: Sequence[int]) -> tuple[float, float, float]:
    """Words along each fiber of a p1 × p2 × p3 grid over (M, N, K) for C = A B by the 3D
    algorithm (2D when p3 = 1): A's blocks are broadcast along dimension 2, B's along dimension 1,
    C's partial sums reduced along dimension 3 (the totals over all fibers of a dimension)."""
    if len(grid) != 3:
        raise ValueError(f"a matrix multiplication runs on a 3-dimensional grid, not {grid!r}.")
    return (float(k * n), float(m * k), float(m * n))


def processor_grid(
    m: int, n: int, k: int, ranks: int, split_k: bool = True
) -> tuple[int, int, int]:
    """The p1 × p2 × p3 grid over (M, N, K) of least total volume Σ W_i (p_i − 1), ignoring
    nodes (what a node-oblivious library picks; the first in enumeration order among equals).
    Without ``split_k``, a 2D grid (p3 = 1): every rank then owns whole sums, as owner-computes
    runs them.

    >>> processor_grid(100, 100, 100, 8), processor_grid(100, 100, 100, 8, split_k=False)
    ((2, 2, 2), (2, 4, 1))
    """
    grids = [
        (p1, p2, ranks // (p1 * p2))
        for p1 in range(1, ranks + 1)
        if ranks % p1 == 0
        for p2 in range(1, ranks // p1 + 1)
        if (ranks // p1) % p2 == 0 and (split_k or p1 * p2 == ranks)
    ]
    return min(
        grids,
        key=lambda g: sum(w * (p - 1) for w, p in zip(matmul_words(m, n, k, g), g, strict=True)),
    )


def grid_owners(
    block_tiles: Sequence[Sequence[int]], grid: Sequence[int], node_grid: Sequence[int]
) -> np.ndarray:
    """Per stored block (given by its tiles, one per index), the rank a block-cyclic layout over
    the processor grid puts it on: tiles (t_1, …, t_d) at position (t_i mod p_i), placed by
    :func:`grid_rank`. What :meth:`tilecc.Tensor.distribute_on_grid_` moves a tensor's blocks to.

    >>> grid_owners([(0, 0), (0, 1), (1, 0), (1, 1), (2, 3)], (2, 2), (1, 2)).tolist()
    [0, 1, 2, 3, 1]
    """
    _check(grid, math.prod(node_grid))
    if any(p % m for p, m in zip(grid, node_grid, strict=True)):
        raise ValueError(
            f"the node grid {' x '.join(map(str, node_grid))} does not tile the processor grid "
            f"{' x '.join(map(str, grid))}; give a node grid whose sizes divide the grid's."
        )
    owners = [
        grid_rank([t % p for t, p in zip(tiles, grid, strict=True)], grid, node_grid)
        for tiles in block_tiles
    ]
    return np.asarray(owners, dtype=int)
