"""Node-aware processor grids (paper 002): the search returns the exhaustive minimum of the
inter-node volume (against brute force over every tuple, grids of up to 6 dimensions), paper
002's example (64 ranks in nodes of 8 on an 8 x 8 grid, equal words: 7W by default, 4W node-
aware), and redistribution counted rank by rank."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilecc.grids import (
    choose_node_grid,
    default_node_grid,
    grid_owners,
    grid_rank,
    inter_node_volume,
    matmul_words,
    node_aware_grid,
    node_grids,
    processor_grid,
    redistribution_words,
)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_search_finds_the_brute_force_minimum(data):
    dims = data.draw(st.integers(1, 6))
    grid = tuple(data.draw(st.sampled_from([1, 2, 3, 4, 6, 8])) for _ in range(dims))
    per_node = data.draw(st.sampled_from([d for d in range(1, 17) if math.prod(grid) % d == 0]))
    words = tuple(data.draw(st.integers(0, 1000)) for _ in range(dims))
    every = [
        m
        for m in itertools.product(range(1, per_node + 1), repeat=dims)
        if math.prod(m) == per_node and all(p % mi == 0 for p, mi in zip(grid, m, strict=True))
    ]
    assert sorted(node_grids(grid, per_node)) == sorted(every)
    if every:
        best = node_aware_grid(grid, per_node, words)
        assert best.volume == min(inter_node_volume(grid, m, words) for m in every)
        assert best.volume == inter_node_volume(grid, best.node_grid, words)


def test_papers_example_cuts_seven_w_to_four_w():
    grid, words = (8, 8), (1.0, 1.0)
    default = default_node_grid(grid, 8)
    assert default == (8, 1) and inter_node_volume(grid, default, words) == 7.0
    best = node_aware_grid(grid, 8, words)
    assert best.volume == 4.0 and best.node_grid in ((2, 4), (4, 2))


def test_redistribution_counts_the_ranks_that_change_node():
    # 2 x 2 in nodes of 2: by default ranks {0, 1} and {2, 3} share nodes; node-aware (1, 2)
    # puts {0, 2} and {1, 3} together, so half the ranks move whatever the nodes are called.
    assert redistribution_words((2, 2), (1, 2), 10.0) == 20.0
    assert redistribution_words((4, 4, 4), default_node_grid((4, 4, 4), 8), 5.0) == 0.0
    # Worth it only when what it saves over the runs exceeds the move: square 64-rank matmul.
    grid = processor_grid(1000, 1000, 1000, 64)
    words = matmul_words(1000, 1000, 1000, grid)
    per_rank = 3 * 1000 * 1000 / 64
    assert choose_node_grid(grid, 8, words, per_rank, runs=1).node_grid == (4, 2, 1)
    assert choose_node_grid(grid, 8, words, per_rank, runs=10).node_grid == (2, 2, 2)


def test_large_k_gains_nothing_and_small_k_gains():
    # Paper 002: the default grid is already node-efficient for large K, not for small K.
    for (m, n, k), gains in (((1000, 1000, 10000), False), ((1000, 1000, 100), True)):
        grid = processor_grid(m, n, k, 64)
        words = matmul_words(m, n, k, grid)
        default = inter_node_volume(grid, default_node_grid(grid, 8), words)
        assert (node_aware_grid(grid, 8, words).volume < default) == gains


def test_bad_grids_are_one_sentence():
    with pytest.raises(ValueError, match="nodes of 3 ranks do not divide the 16 ranks"):
        list(node_grids((4, 4), 3))
    with pytest.raises(ValueError, match="positive whole numbers of ranks"):
        list(node_grids((4, 0), 2))
    with pytest.raises(ValueError, match="2 word counts for a grid of 3 dimensions"):
        node_aware_grid((2, 2, 2), 2, (1.0, 1.0))


@given(st.sampled_from([(2, 2), (4, 2), (2, 3, 2), (8, 8)]), st.integers(1, 8))
def test_grid_ranks_fill_each_node_with_its_box(grid, per_node):
    """Every position gets its own rank, and each node (per_node consecutive ranks) holds exactly
    the positions of one box of the node grid."""
    for node_grid in node_grids(grid, per_node) if math.prod(grid) % per_node == 0 else []:
        positions = list(itertools.product(*(range(p) for p in grid)))
        ranks = [grid_rank(pos, grid, node_grid) for pos in positions]
        assert sorted(ranks) == list(range(math.prod(grid)))
        for pos, rank in zip(positions, ranks, strict=True):
            box = tuple(c // m for c, m in zip(pos, node_grid, strict=True))
            same_node = [
                q
                for q, r in zip(positions, ranks, strict=True)
                if r // per_node == rank // per_node
            ]
            assert all(
                tuple(c // m for c, m in zip(q, node_grid, strict=True)) == box for q in same_node
            )


def test_blocks_go_to_their_cyclic_grid_position():
    tiles = [(i, j) for i in range(3) for j in range(3)]
    owners = grid_owners(tiles, (2, 2), (2, 1))  # ranks numbered down the columns
    assert owners.tolist() == [0, 2, 0, 1, 3, 1, 0, 2, 0]
    with pytest.raises(ValueError, match="node grid 1 x 2 does not tile the processor grid 2 x 3"):
        grid_owners(tiles, (2, 3), (1, 2))


def test_a_tensor_of_one_process_has_no_owners_to_change():
    from tilecc import Space, Tensor

    t = Tensor([Space.spatial(4, tile=2)] * 2)
    assert t.owners is None
    with pytest.raises(ValueError, match="the 'memory' store keeps a tensor in one process"):
        t.redistribute_([0] * 4)
    with pytest.raises(ValueError, match="has 2 indices and the grid 2 x 2 x 1 3 dimensions"):
        t.distribute_on_grid_((2, 2, 1))
