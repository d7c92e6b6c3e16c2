"""DIIS extrapolation against the Pulay equations solved directly over the kept history, on
NumPy vectors and on block vectors (against their dense tensors)."""

from __future__ import annotations

import numpy as np

import tilecc
from tilecc import antisymmetric
from tilecc.cc.diis import DIIS
from tilecc.cc.vector import BlockVector


def direct(vectors, errors):
    n = len(errors)
    b = -np.ones((n + 1, n + 1))
    b[:n, :n] = [[e @ f for f in errors] for e in errors]
    b[n, n] = 0.0
    rhs = np.zeros(n + 1)
    rhs[n] = -1.0
    c = np.linalg.solve(b, rhs)[:n]
    return sum(ci * v for ci, v in zip(c, vectors))


def test_extrapolation_over_a_sliding_history_matches_the_direct_solution():
    rng = np.random.default_rng(3)
    diis = DIIS(space=3)
    vectors, errors = [], []
    for _ in range(7):
        v, e = rng.standard_normal(20), rng.standard_normal(20)
        vectors, errors = [*vectors, v][-3:], [*errors, e][-3:]
        assert np.allclose(diis.update(v, e), direct(vectors, errors), atol=1e-10)


def test_restore_continues_as_if_never_interrupted():
    rng = np.random.default_rng(4)
    pairs = [(rng.standard_normal(8), rng.standard_normal(8)) for _ in range(6)]
    straight, resumed = DIIS(space=4), DIIS(space=4)
    for v, e in pairs[:4]:
        straight.update(v, e)
    resumed.restore(*straight.history)
    for v, e in pairs[4:]:
        assert np.allclose(resumed.update(v, e), straight.update(v, e), atol=1e-12)


def test_block_vectors_extrapolate_as_their_dense_tensors_do():
    # Antisymmetric tensors tiled unevenly: the block vectors' dot products must be the dense
    # ones, symmetric images included, for the extrapolation to match.
    o = tilecc.Space.spatial(5, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(4, tile=3, kind="virtual", name="v")

    def random_vector(seed: int) -> BlockVector:
        t1 = tilecc.Tensor([o, v], name="t1")
        t2 = tilecc.Tensor([o, o, v, v], symmetry=[antisymmetric(4, 0, 1), antisymmetric(4, 2, 3)])
        t1.fill_random_(seed)
        t2.fill_random_(seed + 1)
        return BlockVector((t1, t2))

    def dense(x: BlockVector) -> np.ndarray:
        return np.concatenate([t.to_dense().ravel() for t in x.tensors])

    diis = DIIS(space=3, combination=BlockVector.combination)
    vectors, errors = [], []
    for step in range(5):
        v_, e_ = random_vector(10 * step), random_vector(10 * step + 5)
        vectors, errors = [*vectors, dense(v_)][-3:], [*errors, dense(e_)][-3:]
        assert np.allclose(dense(diis.update(v_, e_)), direct(vectors, errors), atol=1e-10)
