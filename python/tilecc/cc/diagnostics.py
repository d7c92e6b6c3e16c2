"""What a chemist checks after a CC run besides the energy: the T1 and D1 diagnostics of
multireference character, the largest amplitudes, and the reference's ⟨S²⟩ (spin contamination
of an open-shell SCF).

- T1 = ||t1|| / sqrt(N), N the correlated electrons (Lee and Taylor); spin-orbital amplitudes
  count each spatial excitation twice, so their norm is divided by 2N, which gives a closed
  shell the same T1 through either form (PySCF's ``get_t1_diagnostic``).
- D1 = the largest singular value of t1 (Janssen and Nielsen), closed shells only (PySCF's
  ``get_d1_diagnostic``).
- Largest amplitudes: each distinct amplitude once (t_ij^ab = t_ji^ba for closed shells; i < j
  and a < b for antisymmetric spin orbitals), orbitals numbered from 1 in order of energy
  within the correlated occupied and virtual orbitals (with α/β for spin orbitals).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

#: Amplitudes of more elements than this are not scanned for the largest (a dense copy each).
LARGEST_SCAN_ELEMENTS = 2**25


@dataclass
class Diagnostics:
    t1: float
    d1: float | None  # closed shells only
    s2: float | None  # the reference's ⟨S²⟩ (open shells)
    s2_exact: float | None  # S(S+1) of the state asked for
    largest_t1: list[tuple[str, str, float]] = field(default_factory=list)
    largest_t2: list[tuple[str, str, str, str, float]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _labels(space: Any) -> list[str]:
    """Each orbital of the space (sorted order) as its number in energy order, and its spin."""
    energies = np.asarray(space.energies)
    rank = np.empty(len(energies), dtype=int)
    spins = np.asarray(space.spins)
    for spin in set(spins.tolist()):
        mine = np.flatnonzero(spins == spin)
        rank[mine[np.argsort(energies[mine], kind="stable")]] = np.arange(1, len(mine) + 1)
    suffix = {1: "α", -1: "β", 0: ""}
    return [f"{r}{suffix[int(s)]}" for r, s in zip(rank, spins, strict=True)]


def diagnostics(t1: Any, t2: Any, mf: Any, largest: int = 5) -> Diagnostics:
    occ, vir = t1.spaces
    spin_orbitals = any(s != 0 for s in occ.spins)
    dense_t1 = t1.to_dense()
    electrons = occ.size if spin_orbitals else 2 * occ.size
    norm2 = float(np.sum(dense_t1**2))
    t1_diagnostic = float(np.sqrt(norm2 / (2 * electrons if spin_orbitals else electrons)))
    d1 = None if spin_orbitals else float(np.linalg.svd(dense_t1, compute_uv=False).max(initial=0))
    s2 = s2_exact = None
    if getattr(mf.mol, "spin", 0) != 0 or mf.__class__.__name__.startswith(("UHF", "ROHF")):
        s2_value, _ = mf.spin_square()
        s2 = float(s2_value)
        half = mf.mol.spin / 2
        s2_exact = half * (half + 1)
    o, v = _labels(occ), _labels(vir)
    top1 = np.argsort(-np.abs(dense_t1), axis=None)[:largest]
    largest_t1 = [
        (o[i], v[a], float(dense_t1[i, a])) for i, a in zip(*np.unravel_index(top1, dense_t1.shape))
    ]
    largest_t2: list[tuple[str, str, str, str, float]] = []
    if t2.dense_elements <= LARGEST_SCAN_ELEMENTS:
        dense = t2.to_dense()
        i, j, a, b = (
            np.arange(n).reshape([-1 if k == axis else 1 for k in range(4)])
            for axis, n in enumerate(dense.shape)
        )
        distinct = (i < j) & (a < b) if spin_orbitals else (i < j) | ((i == j) & (a <= b))
        values = np.where(distinct, np.abs(dense), -1.0)
        for k in np.argsort(-values, axis=None)[:largest]:
            p, q, r, s = np.unravel_index(k, dense.shape)
            if values[p, q, r, s] <= 0:
                break
            largest_t2.append((o[p], o[q], v[r], v[s], float(dense[p, q, r, s])))
    return Diagnostics(t1_diagnostic, d1, s2, s2_exact, largest_t1, largest_t2)


def lines(d: Diagnostics) -> list[str]:
    """The diagnostics as a run prints them."""
    out = [
        f"T1 diagnostic = {d.t1:.6f}"
        + (f"   D1 diagnostic = {d.d1:.6f}" if d.d1 is not None else "")
    ]
    if d.s2 is not None and d.s2_exact is not None:
        out.append(f"<S^2> of the reference = {d.s2:.6f} (exact {d.s2_exact:.6f})")
    if d.largest_t1:
        out.append("largest T1: " + ", ".join(f"{i}->{a} {x:+.6f}" for i, a, x in d.largest_t1))
    if d.largest_t2:
        out.append(
            "largest T2: "
            + ", ".join(f"{i},{j}->{a},{b} {x:+.6f}" for i, j, a, b, x in d.largest_t2)
        )
    return out
