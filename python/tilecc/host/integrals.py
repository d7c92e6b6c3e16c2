"""Chemists' MO integrals (pq|rs) from one PySCF transformation (density-fitted for a
density-fitted mean field), kept in PySCF's pair-packed form and read out block by block, so
that no integral class has to exist as one dense array.

Why one transformation: PySCF's ao2mo makes a pass over the AO integrals on every call, about
as long as transforming a small class. So the six closed-shell classes share one transformation
of all active orbitals, and each class's blocks are gathered from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class _Pairs:
    """How a pair (p, q) of orbital indices addresses one axis of the packed array: the
    triangle p >= q when both indices run over the same orbitals (PySCF packs those), else the
    rectangle p * n + q."""

    def __init__(self, first: int, second: int, axis_length: int) -> None:
        self.packed = first == second and axis_length == first * (first + 1) // 2
        self.second = second

    def index(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        if self.packed:
            high, low = np.maximum(p, q), np.minimum(p, q)
            return high * (high + 1) // 2 + low
        return p * self.second + q


class PackedIntegrals:
    """(pq|rs) over four sets of MO coefficients (pass the same array object twice for a pair
    that runs over the same orbitals, so that PySCF packs it)."""

    def __init__(self, mf: Any, coefficients: tuple[np.ndarray, ...]) -> None:
        from pyscf import ao2mo

        eri = getattr(mf, "_eri", None)
        with_df = getattr(mf, "with_df", None)
        if with_df is not None:
            # A density-fitted mean field gets density-fitted integrals (sum_L B_pq^L B_rs^L),
            # as PySCF's CCSD(mf) does for one: exact integrals would pair a DF reference with
            # another Hamiltonian.
            self.array = with_df.ao2mo(coefficients, compact=True)
        elif eri is not None:
            self.array = ao2mo.incore.general(eri, coefficients, compact=True)
        else:
            self.array = ao2mo.general(mf.mol, coefficients, compact=True)
        n = [c.shape[1] for c in coefficients]
        self.array = self.array.reshape(-1, self.array.shape[-1])
        self.rows = _Pairs(n[0], n[1], self.array.shape[0])
        self.cols = _Pairs(n[2], n[3], self.array.shape[1])

    def block(self, p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The dense (pq|rs) for these orbital index arrays (positions in the coefficients)."""
        rows = self.rows.index(p[:, None], q[None, :]).ravel()
        cols = self.cols.index(r[:, None], s[None, :]).ravel()
        return self.array[np.ix_(rows, cols)].reshape(len(p), len(q), len(r), len(s))
