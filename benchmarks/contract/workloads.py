"""The two CCSD terms the contraction benchmark times, built with or without symmetry.

ladder: r[ijab] += t[ijcd] v[abcd]  (GEMM-shaped as stored: no permutation needed)
ring:   r[ijab] += v[kbcj] t[ikac]  (every operand and the result must be permuted)

Without symmetry: spatial orbitals, one irrep, no permutational symmetry (dense blocks).
With symmetry: the same o, v as spin orbitals (2o, 2v), four C2v irreps dealt round-robin, and
antisymmetric t, r and v where the term allows it (the ring's v[kbcj] and r have none).
"""

from __future__ import annotations

from dataclasses import dataclass

import tilecc


@dataclass
class Workload:
    name: str
    o: int
    v: int
    tile: int
    symmetry: bool
    context: tilecc.Context

    def build(self) -> tuple[tilecc.Tensor, str, tilecc.Tensor, str, tilecc.Tensor, str]:
        """(r, r labels, a, a labels, b, b labels) filled with random data."""
        ctx = self.context
        if self.symmetry:
            o = tilecc.Space.spin_orbitals(
                [p % 4 for p in range(self.o)], tile=self.tile, kind="occupied", name="o"
            )
            v = tilecc.Space.spin_orbitals(
                [p % 4 for p in range(self.v)], tile=self.tile, kind="virtual", name="v"
            )
            anti = tilecc.antisymmetric_pairs()
        else:
            o = tilecc.Space.spatial(self.o, tile=self.tile, kind="occupied", name="o")
            v = tilecc.Space.spatial(self.v, tile=self.tile, kind="virtual", name="v")
            anti = []
        if self.name == "ladder":
            t = tilecc.Tensor([o, o, v, v], anti, name="t", context=ctx)
            w = tilecc.Tensor([v, v, v, v], anti, name="v", context=ctx)
            r = tilecc.Tensor([o, o, v, v], anti, name="r", context=ctx)
            operands = (r, "ijab", t, "ijcd", w, "abcd")
        elif self.name == "ring":
            t = tilecc.Tensor([o, o, v, v], anti, name="t", context=ctx)
            w = tilecc.Tensor([o, v, v, o], name="v", context=ctx)
            r = tilecc.Tensor([o, o, v, v], name="r", context=ctx)
            operands = (r, "ijab", w, "kbcj", t, "ikac")
        else:
            raise ValueError(f"unknown workload {self.name!r}; use ladder or ring")
        operands[2].fill_random_(1)
        operands[4].fill_random_(2)
        return operands
