"""Every mistake a user can make with spaces, tensors and expressions ends in one clear
ValueError that names the operand and the values."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tilecc


@pytest.fixture
def ctx() -> tilecc.Context:
    return tilecc.Context(threads=1)


@pytest.fixture
def ov(ctx):
    o = tilecc.Space.spatial(3, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(5, tile=2, kind="virtual", name="v")
    return o, v


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tilecc.Space([0, 1], tile=0), "tile size must be a positive number"),
        (lambda: tilecc.Space([0, 1], tile=-3), "tile size must be a positive number"),
        (lambda: tilecc.Space([0, 8], tile=2, name="x"), "has irrep 8, but irreps"),
        (lambda: tilecc.Space([0, -1], tile=2), "has irrep -1"),
        (lambda: tilecc.Space([], tile=2, name="e"), "has no orbitals"),
        (lambda: tilecc.Space([0, 0], spins=["alpha"], tile=2), "one irrep, spin and energy"),
        (lambda: tilecc.Space([0], spins=["up"], tile=2), "spin 'up' is not one of"),
        (lambda: tilecc.Space([0], tile=2, kind="core"), "kind must be one of"),
        (lambda: tilecc.Space([0], tile=2.5), "tile size must be a whole number"),
    ],
)
def test_bad_spaces(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_symmetry_generators(ctx, ov):
    o, v = ov
    with pytest.raises(ValueError, match=r"is not a permutation of 0..3"):
        tilecc.Tensor([o, o, v, v], [((0, 0, 2, 3), -1)], context=ctx)
    with pytest.raises(ValueError, match=r"has 3 entries but the tensor has 4 indices"):
        tilecc.Tensor([o, o, v, v], [((1, 0, 2), -1)], context=ctx)
    with pytest.raises(ValueError, match=r"swaps index 0 \(space 'o'.*\) with index 2"):
        tilecc.Tensor([o, o, v, v], [((2, 1, 0, 3), -1)], context=ctx)
    with pytest.raises(ValueError, match=r"inconsistent.*identically zero"):
        tilecc.Tensor(
            [o, o], [tilecc.antisymmetric(2, 0, 1), tilecc.symmetric(2, 0, 1)], context=ctx
        )
    with pytest.raises(ValueError, match=r"sign \+1 or -1"):
        tilecc.Tensor([o, o], [((1, 0), 2)], context=ctx)
    with pytest.raises(ValueError, match=r"a \(permutation, sign\) pair"):
        tilecc.Tensor([o, o], ["ij->ji"], context=ctx)
    with pytest.raises(ValueError, match=r"mixes bra and ket"):
        tilecc.Tensor([o, o, o, o], [tilecc.symmetric(4, 1, 2)], context=ctx)
    with pytest.raises(ValueError, match=r"spin sides give 2 entries"):
        tilecc.Tensor([o, o, v, v], spin_sides=[1, -1], context=ctx)
    with pytest.raises(ValueError, match=r"irrep must be 0 to 7"):
        tilecc.Tensor([o, o], irrep=9, context=ctx)
    with pytest.raises(ValueError, match=r"index 1 must be a tilecc.Space"):
        tilecc.Tensor([o, 3], context=ctx)


def test_bad_dense_arrays(ctx, ov):
    o, v = ov
    t = tilecc.Tensor([o, o, v, v], tilecc.antisymmetric_pairs(), name="t2", context=ctx)
    with pytest.raises(ValueError, match=r"t2: the array's shape \(3, 3, 5\) is not"):
        t.from_dense_(np.zeros((3, 3, 5)))
    with pytest.raises(ValueError, match=r"t2: the array breaks the tensor's symmetry"):
        t.from_dense_(np.ones((3, 3, 5, 5)))
    t.from_dense_(np.ones((3, 3, 5, 5)), check=False)  # allowed when asked for


def test_bad_labels(ctx, ov):
    o, v = ov
    t2 = tilecc.Tensor([o, o, v, v], tilecc.antisymmetric_pairs(), name="t2", context=ctx)
    f = tilecc.Tensor([o, v], name="f", context=ctx)
    r = tilecc.Tensor([o, o, v, v], name="r", context=ctx)
    with pytest.raises(ValueError, match=r"t2\[i,j,a\]: 3 labels for a tensor with 4 indices"):
        t2["ija"]
    with pytest.raises(ValueError, match=r"uses label 'i' twice"):
        t2["iiab"]
    with pytest.raises(ValueError, match=r"label '1x' is not a name"):
        t2["1x, j, a, b"]
    with pytest.raises(
        ValueError,
        match=r"label 'a' names an virtual index but that index runs "
        r"over the occupied space 'o'",
    ):
        t2["ajib"]
    with pytest.raises(ValueError, match=r"index it with a label string"):
        t2[0]
    with pytest.raises(ValueError, match=r"label 'a' of the output is not a free label"):
        r["ijab"] = t2["ijcb"]
    with pytest.raises(ValueError, match=r"free labels of every term must be exactly"):
        r["ijab"] = t2["ijcb"] * f["kc"]
    with pytest.raises(ValueError, match=r"more than two tensors"):
        r["ijab"] = t2["ijab"] * f["kc"] * f["kc"]
    with pytest.raises(ValueError, match=r"not a tensor expression"):
        r["ijab"] = 2.0
    with pytest.raises(ValueError, match=r"not a tensor expression"):
        r["ijab"] += t2["ijab"] + 1.0


def test_label_with_two_spaces(ctx, ov):
    o, v = ov
    p = tilecc.Space.spatial(5, tile=2, name="p")
    a = tilecc.Tensor([o, p], name="A", context=ctx)
    b = tilecc.Tensor([o, v], name="B", context=ctx)
    c = tilecc.Tensor([p, v], name="C", context=ctx)
    with pytest.raises(
        ValueError,
        match=r"label 'y' means space 'v' \(5 orbitals\) in one place "
        r"and 'p' \(5 orbitals\) in A\[i,y\]",
    ):
        c["xy"] = a["iy"] * b["ix"]


def test_batched_label_is_refused_by_the_core(ctx, ov):
    o, _ = ov
    a = tilecc.Tensor([o, o], name="A", context=ctx)
    b = tilecc.Tensor([o, o], name="B", context=ctx)
    c = tilecc.Tensor([o, o], name="C", context=ctx)
    # i appears in A, B and C: the expression layer sees a free-label mismatch first.
    with pytest.raises(ValueError, match=r"free labels"):
        c["ij"] = a["ij"] * b["ij"]
    with pytest.raises(ValueError, match=r"batched \(Hadamard\) labels are not supported"):
        tilecc._core.ContractionPlan(
            (c._shape, ["i", "j"], "C"), (a._shape, ["i", "k"], "A"), (b._shape, ["i", "j"], "B")
        )


def test_output_symmetry_not_respected(ctx, ov):
    o, v = ov
    t2 = tilecc.Tensor([o, o, v, v], tilecc.antisymmetric_pairs(), name="t2", context=ctx)
    x = tilecc.Tensor([o, o, v, v], name="x", context=ctx)
    w = tilecc.Tensor([o, v, v, o], name="w", context=ctx)
    with pytest.raises(
        ValueError,
        match=r"t2\[i,j,a,b\] has the symmetry t2\[i,j,a,b\] = "
        r"-t2\[j,i,a,b\] but x\[i,j,a,b\] does not",
    ):
        t2["ijab"] = x["ijab"]
    with pytest.raises(ValueError, match=r"has the symmetry"):
        t2["ijab"] += w["kbcj"] * t2["ikac"]
    with pytest.raises(ValueError, match=r"has the symmetry"):
        t2["ijab"] = x["ijab"] - x["jiab"]  # antisymmetric in ij only, not in ab
    t2["ijab"] = x["ijab"] - x["jiab"] - x["ijba"] + x["jiba"]  # respects both: accepted


def test_contexts_must_match(ov):
    o, v = ov
    a = tilecc.Tensor([o, v], name="A", context=tilecc.Context(threads=1))
    b = tilecc.Tensor([o, v], name="B", context=tilecc.Context(threads=1))
    with pytest.raises(ValueError, match=r"another context"):
        a["ia"] = b["ia"]


def test_bad_runtime_options():
    with pytest.raises(
        ValueError,
        match=r"unknown scheduling policy 'fastest'; valid ones "
        r"are: buckets, counter, static-block, static-lpt, steal, tce\.",
    ):
        tilecc.Context(threads=1, policy="fastest")
    with pytest.raises(
        ValueError, match=r"quantum .* must be a whole number from 1 to 2147483647, got 0"
    ):
        tilecc.Context(threads=1, quantum=0)
    with pytest.raises(ValueError, match=r"threads must be a whole number from 1 to 1024, got 0"):
        tilecc.Context(threads=0)
    with pytest.raises(ValueError, match=r"from 1 to 1024, got 100000"):
        tilecc.Context(threads=100000)


def test_zero_denominator_names_the_block(ctx):
    o = tilecc.Space.spatial(2, tile=2, kind="occupied", name="o")
    t = tilecc.Tensor([o, o], name="t", context=ctx)
    t.fill_(1.0)
    with pytest.raises(ValueError, match=r"the denominator is zero at element 0 of block 0"):
        t.divide_by_denominators_((1, -1))
    with pytest.raises(ValueError, match=r"denominator signs give 3 entries"):
        t.divide_by_denominators_((1, -1, 1))


def test_bad_tilecc_threads_environment(monkeypatch):
    from tilecc import context

    monkeypatch.setenv("TILECC_THREADS", "many")
    with pytest.raises(ValueError, match=r"TILECC_THREADS must be a whole number"):
        context.Context()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["demo", "--threads", "0"], "expected a number from 1 to"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_refuses_bad_options(args, message):
    run = subprocess.run(
        [sys.executable, "-m", "tilecc.cli", *args], capture_output=True, text=True, check=False
    )
    assert run.returncode != 0
    assert message in run.stderr
    assert "Traceback" not in run.stderr
