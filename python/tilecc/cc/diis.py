"""DIIS (direct inversion in the iterative subspace, Pulay 1980) for amplitude vectors."""

from __future__ import annotations

import numpy as np


class DIIS:
    """Extrapolates a vector from the last ``space`` (vector, error) pairs by minimising the
    norm of the combined error under sum(c) = 1.

    >>> d = DIIS(space=3)
    >>> d.update(np.array([1.0]), np.array([0.5])).round(6)
    array([1.])
    """

    def __init__(self, space: int = 6) -> None:
        if space < 1:
            raise ValueError(f"the DIIS space must hold at least one vector, got {space}.")
        self.space = space
        self._vectors: list[np.ndarray] = []
        self._errors: list[np.ndarray] = []

    @property
    def history(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(vectors, errors), oldest first: what a checkpoint keeps."""
        return list(self._vectors), list(self._errors)

    def restore(self, vectors: list[np.ndarray], errors: list[np.ndarray]) -> None:
        self._vectors = [v.copy() for v in vectors][-self.space :]
        self._errors = [e.copy() for e in errors][-self.space :]

    def update(self, vector: np.ndarray, error: np.ndarray) -> np.ndarray:
        self._vectors.append(vector.copy())
        self._errors.append(error.copy())
        if len(self._vectors) > self.space:
            self._vectors.pop(0)
            self._errors.pop(0)
        n = len(self._vectors)
        b = np.empty((n + 1, n + 1))
        b[:n, :n] = [[float(ei @ ej) for ej in self._errors] for ei in self._errors]
        b[n, :n] = b[:n, n] = -1.0
        b[n, n] = 0.0
        rhs = np.zeros(n + 1)
        rhs[n] = -1.0
        # lstsq tolerates the near-singular B of nearly converged, linearly dependent errors.
        coefficients = np.linalg.lstsq(b, rhs, rcond=None)[0][:n]
        return sum((c * v for c, v in zip(coefficients, self._vectors)), np.zeros_like(vector))
