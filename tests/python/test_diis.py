"""DIIS extrapolation against the Pulay equations solved directly over the kept history."""

from __future__ import annotations

import numpy as np

from tilecc.cc.diis import DIIS


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
