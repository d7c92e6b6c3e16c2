"""DIIS (direct inversion in the iterative subspace, Pulay 1980) for amplitude vectors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import numpy as np


class Vector(Protocol):
    def dot(self, other: Any, /) -> Any: ...


V = TypeVar("V", bound=Vector)


def _numpy_combination(coefficients: Sequence[float], vectors: Sequence[Any]) -> Any:
    return sum(c * v for c, v in zip(coefficients, vectors))


class DIIS(Generic[V]):
    """Extrapolates a vector from the last ``space`` (vector, error) pairs by minimising the
    norm of the combined error under sum(c) = 1. Vectors are anything with ``dot`` that
    ``combination(coefficients, vectors)`` combines: block vectors (cc/vector.py) in the
    solver, NumPy arrays by default. DIIS keeps the vectors it is given: do not change them
    afterwards.

    >>> d = DIIS(space=3)
    >>> d.update(np.array([1.0]), np.array([0.5])).round(6)
    array([1.])
    """

    def __init__(
        self,
        space: int = 6,
        combination: Callable[[Sequence[float], Sequence[V]], V] = _numpy_combination,
    ) -> None:
        if space < 1:
            raise ValueError(f"the DIIS space must hold at least one vector, got {space}.")
        self.space = space
        self._combination = combination
        self._vectors: list[V] = []
        self._errors: list[V] = []
        # Overlaps of the kept errors: each update adds one row instead of recomputing all.
        self._overlaps = np.zeros((0, 0))

    @property
    def history(self) -> tuple[list[V], list[V]]:
        """(vectors, errors), oldest first: what a checkpoint keeps."""
        return list(self._vectors), list(self._errors)

    def restore(self, vectors: list[V], errors: list[V]) -> None:
        self._vectors = list(vectors)[-self.space :]
        self._errors = list(errors)[-self.space :]
        n = len(self._errors)
        self._overlaps = np.array([[float(a.dot(b)) for b in self._errors] for a in self._errors])
        self._overlaps = self._overlaps.reshape(n, n)

    def update(self, vector: V, error: V) -> V:
        self._vectors.append(vector)
        self._errors.append(error)
        row = np.array([float(error.dot(e)) for e in self._errors])
        n = len(self._errors)
        overlaps = np.empty((n, n))
        overlaps[: n - 1, : n - 1] = self._overlaps
        overlaps[n - 1, :] = overlaps[:, n - 1] = row
        if n > self.space:
            self._vectors.pop(0)
            self._errors.pop(0)
            overlaps = overlaps[1:, 1:].copy()
            n -= 1
        self._overlaps = overlaps
        b = np.empty((n + 1, n + 1))
        b[:n, :n] = overlaps
        b[n, :n] = b[:n, n] = -1.0
        b[n, n] = 0.0
        rhs = np.zeros(n + 1)
        rhs[n] = -1.0
        # lstsq tolerates the near-singular B of nearly converged, linearly dependent errors.
        coefficients = np.linalg.lstsq(b, rhs, rcond=None)[0][:n]
        return self._combination([float(c) for c in coefficients], self._vectors)
