"""Block tensors against their dense NumPy equivalents: storage, symmetry, element-wise ops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import occupied_virtual

import tilecc
from tilecc.testing import (
    allowed_mask,
    assert_close,
    random_symmetric_dense,
    symmetry_error,
)

SYMMETRIES = {
    "none": [],
    "antisymmetric pairs": tilecc.antisymmetric_pairs(),
    "symmetric pairs": [tilecc.symmetric(4, 0, 1), tilecc.symmetric(4, 2, 3)],
    "pair swap": [tilecc.pair_swap()],
    "antisym ij only": [tilecc.antisymmetric(4, 0, 1)],
}


@given(occupied_virtual(), st.sampled_from(sorted(SYMMETRIES)))
def test_dense_round_trip_keeps_symmetry_and_sparsity(sp, sym):
    o, v, seed = sp
    t = tilecc.Tensor([o, o, v, v], SYMMETRIES[sym], name="t", context=tilecc.Context(threads=1))
    dense = random_symmetric_dense(t, np.random.default_rng(seed))
    t.from_dense_(dense)
    assert_close(t.to_dense(), dense, what=f"round trip (seed {seed})")
    t.fill_random_(seed)
    d = t.to_dense()
    assert symmetry_error(t, d) < 1e-14
    assert not np.any(d[~allowed_mask(t)])


@given(occupied_virtual(), st.sampled_from(sorted(SYMMETRIES)))
def test_from_blocks_equals_from_dense(sp, sym):
    o, v, seed = sp
    ctx = tilecc.Context(threads=1)
    t = tilecc.Tensor([o, o, v, v], SYMMETRIES[sym], name="t", context=ctx)
    dense = random_symmetric_dense(t, np.random.default_rng(seed))
    asked = []
    t.from_blocks_(lambda ranges: asked.append(ranges) or dense[ranges])
    assert len(asked) == t.num_blocks
    assert_close(t.to_dense(), dense, what=f"from_blocks_ (seed {seed})")


def test_from_blocks_refuses_a_block_of_the_wrong_shape():
    o = tilecc.Space.spatial(4, tile=2, kind="occupied", name="o")
    t = tilecc.Tensor([o, o], name="t", context=tilecc.Context(threads=1))
    with pytest.raises(ValueError, match="came back with shape"):
        t.from_blocks_(lambda ranges: np.zeros((1, 1)))


@given(occupied_virtual(), st.sampled_from(sorted(SYMMETRIES)))
def test_stored_elements_match_dense_counts(sp, sym):
    o, v, _ = sp
    t = tilecc.Tensor([o, o, v, v], SYMMETRIES[sym], name="t", context=tilecc.Context(threads=1))
    rep = t.storage_report()
    assert rep["dense_elements"] == np.prod(t.shape)
    # Non-zero blocks, all orbits counted, are exactly the allowed elements of the dense tensor.
    assert rep["nonzero_elements"] == int(np.count_nonzero(allowed_mask(t)))
    assert rep["stored_elements"] <= rep["nonzero_elements"]
    if sym == "none":
        assert rep["stored_elements"] == rep["nonzero_elements"]


@given(occupied_virtual(), st.floats(-3, 3), st.integers(1, 2))
def test_scale_copy_norm_dot(sp, alpha, threads):
    o, v, seed = sp
    ctx = tilecc.Context(threads=threads)
    t = tilecc.Tensor([o, o, v, v], tilecc.antisymmetric_pairs(), name="t", context=ctx)
    u = tilecc.Tensor.like(t, name="u")
    t.fill_random_(seed)
    u.fill_random_(seed + 1)
    dt, du = t.to_dense(), u.to_dense()
    assert t.norm() == pytest.approx(np.linalg.norm(dt), rel=1e-12, abs=1e-14)
    assert t.dot(u) == pytest.approx(float(np.sum(dt * du)), rel=1e-11, abs=1e-12)
    c = t.copy("c")
    c.scale_(alpha)
    assert_close(c.to_dense(), alpha * dt)
    assert_close(t.to_dense(), dt, what="the original after copying")


@given(occupied_virtual(), st.floats(-0.5, 0.5))
def test_divide_by_denominators(sp, shift):
    o, v, seed = sp
    t = tilecc.Tensor(
        [o, o, v, v], tilecc.antisymmetric_pairs(), name="t", context=tilecc.Context(threads=1)
    )
    t.fill_random_(seed)
    d = t.to_dense()
    eo, ev = o.energies, v.energies
    denom = (
        shift
        + eo[:, None, None, None]
        + eo[None, :, None, None]
        - ev[None, None, :, None]
        - ev[None, None, None, :]
    )
    t.divide_by_denominators_((1, 1, -1, -1), shift)
    assert_close(t.to_dense(), d / denom)


def test_fill_respects_antisymmetry():
    o = tilecc.Space.spatial(3, tile=2, kind="occupied", name="o")
    t = tilecc.Tensor([o, o], [tilecc.antisymmetric(2, 0, 1)], context=tilecc.Context(threads=1))
    t.fill_(2.0)
    expected = 2.0 * (np.triu(np.ones((3, 3)), 1) - np.tril(np.ones((3, 3)), -1))
    assert_close(t.to_dense(), expected)


def test_tensors_of_one_structure_share_a_shape_whether_or_not_their_spin_sides_are_given():
    """Shapes are keyed on the spin sides the core settles on: a tensor with the default sides,
    one made like it (Tensor.like passes the sides on) and one given the same sides have one
    shape, and so share plans; other sides make another shape."""
    ctx = tilecc.Context(threads=1)
    o = tilecc.Space.spatial(3, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(4, tile=2, kind="virtual", name="v")
    pair = [tilecc.pair_swap()]
    t2 = tilecc.Tensor([o, o, v, v], pair, name="t2", context=ctx)
    assert t2.spin_sides == (1, 1, -1, -1)
    alike = tilecc.Tensor.like(t2)
    given = tilecc.Tensor([o, o, v, v], pair, spin_sides=(1, 1, -1, -1), context=ctx)
    chemists = tilecc.Tensor([o, o, v, v], pair, spin_sides=(1, -1, 1, -1), context=ctx)
    assert t2._shape_id == alike._shape_id == given._shape_id != chemists._shape_id
    f = tilecc.Tensor([v, v], name="f", context=ctx)
    r = tilecc.Tensor([o, o, v, v], name="r", context=ctx)
    for t in (t2, alike, given):
        r["ijab"] += t["ijcb"] * f["ac"]
    assert (ctx.stats.plans_built, ctx.stats.plans_reused) == (1, 2)


def test_eightfold_integral_symmetry_stores_an_eighth():
    p = tilecc.Space.spatial(12, tile=1, name="p")
    gens = [tilecc.symmetric(4, 0, 1), tilecc.symmetric(4, 2, 3), tilecc.bra_ket_swap()]
    eri = tilecc.Tensor([p, p, p, p], gens, name="eri", context=tilecc.Context(threads=1))
    n = 12
    pairs = n * (n + 1) // 2
    assert eri.stored_elements == pairs * (pairs + 1) // 2
    assert len(eri.group_elements) == 8
    dense = random_symmetric_dense(eri, np.random.default_rng(0))
    eri.from_dense_(dense)
    assert_close(eri.to_dense(), dense)


def test_space_orders_by_spin_then_irrep_then_energy_and_tiles_never_straddle():
    s = tilecc.Space(
        [1, 0, 1, 0, 0],
        spins=["beta", "alpha", "alpha", "beta", "alpha"],
        energies=[5, 4, 3, 2, 1],
        tile=2,
    )
    assert list(zip(s.spins, s.irreps)) == [(1, 0), (1, 0), (1, 1), (-1, 0), (-1, 1)]
    assert s.energies.tolist() == [1, 4, 3, 2, 5]
    assert s.order == [4, 1, 2, 3, 0]
    assert s.tiles == [(0, 2), (2, 1), (3, 1), (4, 1)]


def test_tiles_are_balanced():
    s = tilecc.Space.spatial(10, tile=4)
    assert [e for _, e in s.tiles] == [4, 3, 3]


@given(
    occupied_virtual(),
    st.sampled_from(sorted(SYMMETRIES)),
    st.sampled_from([None, 1, 2, 3, 5]),
)
def test_retiled_copy_is_the_same_dense_tensor(sp, sym, tile):
    """copy_retiled gathers each block of the new tiling from the overlapping blocks of the old,
    through their canonical blocks: the dense tensor is unchanged, whatever the two tilings."""
    o, v, seed = sp
    t = tilecc.Tensor([o, o, v, v], SYMMETRIES[sym], name="t")
    t.fill_random_(seed)
    again = t.retiled(tile)
    assert again.spaces[0].num_tiles <= o.size
    assert np.abs(again.to_dense() - t.to_dense()).max() < 1e-14
    assert np.abs(again.retiled(o.tile_size).to_dense() - t.to_dense()).max() < 1e-14
