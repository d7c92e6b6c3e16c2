"""No size ceiling: tensors whose tile grids are far beyond a dense block index (2^27 tuples) are
made with a sparse one, as long as their canonical blocks fit in memory. The two sizes the
runtime issue names take seconds and gigabytes, so they are slow tests; a Tensor of a sparse
shape is also contracted in the quick tests."""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np
import pytest

import tilecc
from tilecc import Space, Tensor, _core
from tilecc.symmetry import antisymmetric, antisymmetric_pairs


def spin_orbital_space(tiles: int) -> Space:
    """``tiles`` one-orbital tiles, half alpha, half beta, over 8 irreps."""
    return Space.spin_orbitals([p % 8 for p in range(tiles // 2)], tile=1, kind="virtual", name="v")


def shape(space: Space, rank: int, generators: list) -> object:
    group = _core.PermutationGroup(rank, [(list(p), s) for p, s in generators])
    sides = [1] * (rank // 2) + [-1] * (rank // 2)
    return _core.BlockShape([space._core] * rank, group, sides, 0)


def expected_blocks(space: Space, per_side: int) -> int:
    """Canonical non-zero blocks of a tensor antisymmetric within its bra and within its ket
    (``per_side`` indices each), counted combinatorially: sorted tile tuples of each side, grouped
    by their spin sum and irrep product; a block needs equal spin sums and irrep products XOR to
    0, so the count is the sum over groups of bra count times ket count."""
    spins = [space.spins[offset] for offset, _ in space.tiles]
    irreps = [space.irreps[offset] for offset, _ in space.tiles]
    counts: dict[tuple[int, int], int] = {}
    for side in itertools.combinations_with_replacement(range(len(spins)), per_side):
        key = (
            sum(spins[t] for t in side),
            functools.reduce(operator.xor, (irreps[t] for t in side)),
        )
        counts[key] = counts.get(key, 0) + 1
    return sum(n * n for n in counts.values())


@pytest.mark.slow
def test_rank_four_over_two_hundred_tiles_per_index():
    """1.6e9 tile tuples (a dense index would need 6.4 GB): the canonical blocks only."""
    space = spin_orbital_space(200)
    s = shape(space, 4, antisymmetric_pairs())
    assert s.sparse_index and s.num_blocks == expected_blocks(space, 2)


@pytest.mark.slow
def test_rank_six_over_thirty_tiles_per_index():
    """7.3e8 tile tuples of a CCSDT-like T3 (antisymmetric triples on each side)."""
    space = spin_orbital_space(30)
    generators = [antisymmetric(6, 0, 1), antisymmetric(6, 1, 2)]
    generators += [antisymmetric(6, 3, 4), antisymmetric(6, 4, 5)]
    s = shape(space, 6, generators)
    assert s.sparse_index and s.num_blocks == expected_blocks(space, 3)


def test_sparse_and_dense_shapes_hold_the_same_blocks():
    """The same small tensor with either index: the same blocks, and the same dense tensor
    after the same contraction."""
    space = spin_orbital_space(12)
    group = _core.PermutationGroup(4, [(list(p), s) for p, s in antisymmetric_pairs()])
    shapes = {i: _core.BlockShape([space._core] * 4, group, [1, 1, -1, -1], 0, i) for i in
              ("dense", "sparse")}  # fmt: skip
    assert shapes["sparse"].sparse_index and not shapes["dense"].sparse_index
    blocks = {i: {tuple(s.block_tiles(b)) for b in range(s.num_blocks)} for i, s in shapes.items()}
    assert blocks["dense"] == blocks["sparse"]
    with pytest.raises(ValueError, match="unknown block index 'tree'"):
        _core.BlockShape([space._core] * 4, group, [1, 1, -1, -1], 0, "tree")
    ctx = tilecc.Context(threads=1)
    t = Tensor([space] * 4, antisymmetric_pairs(), name="t", context=ctx)
    t.fill_random_(3)
    r = Tensor.like(t, name="r")
    r["abcd"] = t["abef"] * t["efcd"]
    assert np.isfinite(r.norm())
