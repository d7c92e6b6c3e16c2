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
        # Overlaps of the kept errors: each update adds one row instead of recomputing all.
        self._overlaps = np.zeros((0, 0))

    @property
    def history(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(vectors, errors), oldest first: what a checkpoint keeps."""
        return list(self._vectors), list(self._errors)

    def restore(self, vectors: list[np.ndarray], errors: list[np.ndarray]) -> None:
        self._vectors = [v.copy() for v in vectors][-self.space :]
        self._errors = [e.copy() for e in errors][-self.space :]
        n = len(self._errors)
        self._overlaps = np.array([[float(a @ b) for b in self._errors] for a in self._errors])
        self._overlaps = self._overlaps.reshape(n, n)

    def update(self, vector: np.ndarray, error: np.ndarray) -> np.ndarray:
        self._vectors.append(vector.copy())
        self._errors.append(error.copy())
        row = np.array([float(error @ e) for e in self._errors])
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
        result = np.zeros_like(vector)
        for c, v in zip(coefficients, self._vectors):
            result += c * v
        return result
