"""Contractions and permuted sums against numpy.einsum on the dense equivalents."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import occupied_virtual

import tilecc
from tilecc.testing import assert_close, random_symmetric_dense, symmetry_error

ANTI = tilecc.antisymmetric_pairs()


@given(occupied_virtual(irrep_counts=(1, 2, 4)), st.integers(1, 2))
def test_ladder_with_antisymmetry(p, threads):
    o, v, seed = p
    ctx = tilecc.Context(threads=threads)
    t2 = tilecc.Tensor([o, o, v, v], ANTI, name="t2", context=ctx)
    w = tilecc.Tensor([v, v, v, v], ANTI, name="w", context=ctx)
    r2 = tilecc.Tensor.like(t2, name="r2")
    t2.fill_random_(seed)
    w.fill_random_(seed + 1)
    r2.fill_random_(seed + 2)
    before = r2.to_dense()
    r2["ijab"] += 0.5 * t2["ijcd"] * w["abcd"]
    expected = before + 0.5 * np.einsum("ijcd,abcd->ijab", t2.to_dense(), w.to_dense())
    assert_close(r2.to_dense(), expected, what=f"ladder (seed {seed})")
    assert symmetry_error(r2) < 1e-12


@given(occupied_virtual(irrep_counts=(1, 2, 4)), st.integers(1, 2))
def test_ring_then_antisymmetrize(p, threads):
    o, v, seed = p
    ctx = tilecc.Context(threads=threads)
    t2 = tilecc.Tensor([o, o, v, v], ANTI, name="t2", context=ctx)
    w = tilecc.Tensor([o, v, v, o], name="w", context=ctx)  # <kb||cj>: no symmetry within ovvo
    x = tilecc.Tensor([o, o, v, v], name="x", context=ctx)
    r2 = tilecc.Tensor.like(t2, name="r2")
    t2.fill_random_(seed)
    w.fill_random_(seed + 1)
    x["ijab"] = w["kbcj"] * t2["ikac"]
    ring = np.einsum("kbcj,ikac->ijab", w.to_dense(), t2.to_dense())
    assert_close(x.to_dense(), ring, what=f"ring (seed {seed})")
    r2["ijab"] = x["ijab"] - x["jiab"] - x["ijba"] + x["jiba"]
    expected = (
        ring - ring.transpose(1, 0, 2, 3) - ring.transpose(0, 1, 3, 2) + ring.transpose(1, 0, 3, 2)
    )
    assert_close(r2.to_dense(), expected, what=f"antisymmetrized ring (seed {seed})")
    assert symmetry_error(r2) < 1e-12


@st.composite
def general_contraction(draw: st.DrawFn):
    """Random operands over o/v with random symmetric or antisymmetric pairs, a random split of
    labels into A-only, B-only and summed, and a random output order."""
    o, v, seed = draw(occupied_virtual(irrep_counts=(1, 2, 4)))
    rng = np.random.default_rng(seed)
    pool = {"o": (o, list("ijklmn")), "v": (v, list("abcdef"))}
    n_a, n_b, n_k = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
    labels, space_of = [], {}
    for _ in range(n_a + n_b + n_k):
        kind = "o" if rng.random() < 0.5 else "v"
        label = pool[kind][1].pop(0)
        labels.append(label)
        space_of[label] = pool[kind][0]
    a_only, b_only, summed = labels[:n_a], labels[n_a : n_a + n_b], labels[n_a + n_b :]
    la = [str(x) for x in rng.permutation(a_only + summed)]
    lb = [str(x) for x in rng.permutation(b_only + summed)]
    lc = [str(x) for x in rng.permutation(a_only + b_only)]
    sides_a = [int(x) for x in rng.choice([-1, 0, 1], len(la))]
    sides_b = [int(x) for x in rng.choice([-1, 0, 1], len(lb))]

    def symmetry(ls: list[str], sides: list[int]) -> list:
        # Only indices over one space and on one spin side may be permuted.
        gens, used = [], set()
        for i in range(len(ls)):
            for j in range(i + 1, len(ls)):
                if (
                    i in used
                    or j in used
                    or space_of[ls[i]] != space_of[ls[j]]
                    or sides[i] != sides[j]
                ):
                    continue
                if rng.random() < 0.6:
                    swap = list(range(len(ls)))
                    swap[i], swap[j] = j, i
                    gens.append((swap, int(rng.choice([-1, 1]))))
                    used |= {i, j}
        return gens

    return (
        space_of,
        la,
        lb,
        lc,
        (symmetry(la, sides_a), sides_a),
        (symmetry(lb, sides_b), sides_b),
        seed,
    )


@given(general_contraction(), st.integers(1, 2), st.floats(-2, 2))
def test_random_contractions_match_einsum(case, threads, alpha):
    space_of, la, lb, lc, (sym_a, sides_a), (sym_b, sides_b), seed = case
    ctx = tilecc.Context(threads=threads)
    a = tilecc.Tensor([space_of[x] for x in la], sym_a, spin_sides=sides_a, name="A", context=ctx)
    b = tilecc.Tensor([space_of[x] for x in lb], sym_b, spin_sides=sides_b, name="B", context=ctx)
    # The output has no spin rule: products of arbitrary-rank operands need not conserve it.
    c = tilecc.Tensor([space_of[x] for x in lc], spin_sides=[0] * len(lc), name="C", context=ctx)
    a.fill_random_(seed)
    b.fill_random_(seed + 1)
    if lc:
        c[lc] += alpha * a[la] * b[lb]
        got = c.to_dense()
    else:
        got = np.asarray(alpha * float(a[la] * b[lb]))
    expected = alpha * np.einsum(
        f"{''.join(la)},{''.join(lb)}->{''.join(lc)}", a.to_dense(), b.to_dense()
    )
    assert_close(got, expected, what=f"{lc} = {la} * {lb} (seed {seed})")


@given(occupied_virtual(irrep_counts=(1, 2, 4)))
def test_results_do_not_depend_on_threads_or_tile_size(p):
    o, v, seed = p
    results = []
    for tile, threads in [(1, 1), (3, 2), (64, 2), (2, 1)]:
        ctx = tilecc.Context(threads=threads)
        oo = tilecc.Space(
            o.irreps, spins=o.spins, energies=list(o.energies), tile=tile, kind="occupied", name="o"
        )
        vv = tilecc.Space(
            v.irreps, spins=v.spins, energies=list(v.energies), tile=tile, kind="virtual", name="v"
        )
        t2 = tilecc.Tensor([oo, oo, vv, vv], ANTI, name="t2", context=ctx)
        w = tilecc.Tensor([oo, vv, vv, oo], name="w", context=ctx)
        rng = np.random.default_rng(seed)
        t2.from_dense_(random_symmetric_dense(t2, rng))
        w.from_dense_(random_symmetric_dense(w, rng))
        x = tilecc.Tensor([oo, oo, vv, vv], name="x", context=ctx)
        x["ijab"] = w["kbcj"] * t2["ikac"]
        x["ijab"] += 0.25 * t2["jiba"]
        results.append(x.to_dense())
    for r in results[1:]:
        assert_close(r, results[0], rtol=1e-12, what="result at another tile size / thread count")


def test_contraction_zero_by_symmetry_has_no_tasks():
    o = tilecc.Space.spatial(4, tile=2, kind="occupied", name="o")
    ctx = tilecc.Context(threads=1)
    a = tilecc.Tensor([o, o], [tilecc.antisymmetric(2, 0, 1)], name="a", context=ctx)
    s = tilecc.Tensor([o, o], [tilecc.symmetric(2, 0, 1)], name="s", context=ctx)
    a.fill_random_(1)
    s.fill_random_(2)
    assert float(a["ij"] * s["ij"]) == 0.0
    scalar = tilecc.Tensor([], name="x", context=ctx)
    plan = tilecc.plan_for(scalar[()], a["ij"] * s["ij"])
    assert plan.zero_by_symmetry and plan.num_tasks == 0


def test_symmetric_sum_halves_the_flops():
    o = tilecc.Space.spatial(4, tile=1, kind="occupied", name="o")
    v = tilecc.Space.spatial(8, tile=1, kind="virtual", name="v")
    ctx = tilecc.Context(threads=1)
    t2 = tilecc.Tensor([o, o, v, v], ANTI, name="t2", context=ctx)
    w = tilecc.Tensor([v, v, v, v], ANTI, name="w", context=ctx)
    r2 = tilecc.Tensor.like(t2, name="r2")
    plan = tilecc.plan_for(r2["ijab"], t2["ijcd"] * w["abcd"])
    # Canonical outputs i<=j, a<=b (with tile 1, diagonal blocks are zero by antisymmetry only
    # element-wise, so they are still computed) and summed pairs c<=d: 10*36*36 products of 2 flops.
    assert plan.summed_symmetry_order == 2
    assert plan.executed_flops == pytest.approx(2 * 10 * 36 * 36)
    assert plan.dense_flops == pytest.approx(2 * 4**2 * 8**4)


def test_plans_are_reused():
    o = tilecc.Space.spatial(3, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(5, tile=2, kind="virtual", name="v")
    ctx = tilecc.Context(threads=1)
    t2 = tilecc.Tensor([o, o, v, v], ANTI, name="t2", context=ctx)
    w = tilecc.Tensor([v, v, v, v], ANTI, name="w", context=ctx)
    r2 = tilecc.Tensor.like(t2, name="r2")
    for _ in range(3):
        r2["ijab"] += t2["ijcd"] * w["abcd"]
    assert ctx.stats.plans_built == 1 and ctx.stats.plans_reused == 2


@given(occupied_virtual(irrep_counts=(1, 2)), st.sampled_from([0.0, 1.0]))
def test_blas_parallel_path_agrees(p, threshold):
    """Contractions with large tasks parallelise inside BLAS; forcing either path gives the same
    result as numpy.einsum."""
    o, v, seed = p
    ctx = tilecc.Context(threads=2, blas_parallel_task_flops=threshold)
    t2 = tilecc.Tensor([o, o, v, v], ANTI, name="t2", context=ctx)
    w = tilecc.Tensor([o, v, v, o], name="w", context=ctx)
    x = tilecc.Tensor([o, o, v, v], name="x", context=ctx)
    t2.fill_random_(seed)
    w.fill_random_(seed + 1)
    x["ijab"] = w["kbcj"] * t2["ikac"]
    expected = np.einsum("kbcj,ikac->ijab", w.to_dense(), t2.to_dense())
    assert_close(x.to_dense(), expected, what=f"threshold {threshold} (seed {seed})")


def test_bad_blas_parallel_threshold():
    with pytest.raises(ValueError, match="blas_parallel_task_flops must be >= 0"):
        tilecc.Context(threads=1, blas_parallel_task_flops=-1.0)
