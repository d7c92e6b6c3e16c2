"""Direct-ring CCD (drCCD) for closed-shell RHF references: the ring-diagram approximation used
by cc4s, whose correlation energy equals that of the direct random-phase approximation.

Spatial orbitals, chemists' integrals v_iajb = (ia|jb), amplitudes t_iajb = t_ij^ab with the
symmetry t_iajb = t_jbia. Equations (G. E. Scuseria, T. M. Henderson, D. C. Sorensen, J. Chem.
Phys. 129, 231101 (2008)):

    0 = v + D t + 2 v t + 2 t v + 4 t v t,   E = 2 sum_iajb v_iajb t_iajb

with (x y)_iajb = sum_kc x_iakc y_kcjb and D_iajb = e_a + e_b - e_i - e_j.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilecc.cc.diis import DIIS
from tilecc.cc.gccsd import IterationRecord
from tilecc.context import Context
from tilecc.host.pyscf import RestrictedProblem, restricted_problem
from tilecc.symmetry import bra_ket_swap
from tilecc.tensor import Tensor


@dataclass
class DRCCD:
    """drCCD shaped like PySCF's CC classes: ``DRCCD(mf).run()``; results ``converged``,
    ``e_corr``, ``e_tot``, ``t2``, ``cycles``."""

    mf: Any
    frozen: int | None = None
    tile: int = 16
    threads: int | None = None
    conv_tol: float = 1e-8
    conv_tol_normt: float = 1e-6
    max_cycle: int = 50
    diis_space: int = 6
    callback: Callable[[IterationRecord], None] | None = None
    converged: bool = field(default=False, init=False)
    e_corr: float = field(default=float("nan"), init=False)
    cycles: int = field(default=0, init=False)
    t2: Tensor | None = field(default=None, init=False)
    problem: RestrictedProblem | None = field(default=None, init=False)
    method = "drccd"

    def __post_init__(self) -> None:
        if isinstance(self.tile, bool) or not isinstance(self.tile, int) or self.tile < 1:
            raise ValueError(f"tile must be a whole number of orbitals >= 1, got {self.tile!r}.")
        self.context = Context() if self.threads is None else Context(threads=self.threads)

    @property
    def e_tot(self) -> float:
        return float(self.mf.e_tot) + self.e_corr

    def run(self) -> DRCCD:
        kernel(self)
        return self


def energy(t: Tensor, p: RestrictedProblem) -> float:
    return 2.0 * float(p.ovov["iajb"] * t["iajb"])


def update_amps(t: Tensor, p: RestrictedProblem) -> Tensor:
    """t_new = (v + 2 v t + 2 t v + 4 t v t) / (e_i + e_j - e_a - e_b)."""
    ctx, v = t.context, p.ovov
    o, vir = p.occ, p.vir
    tv = Tensor([o, vir, o, vir], name="t.v", context=ctx)
    tv["iald"] = t["iakc"] * v["kcld"]
    tvt = Tensor([o, vir, o, vir], name="t.v.t", context=ctx)
    tvt["iajb"] = tv["iald"] * t["ldjb"]
    new = Tensor.like(t, name="t2")
    new["iajb"] = v["iajb"] + 2.0 * v["iakc"] * t["kcjb"] + 2.0 * t["iakc"] * v["kcjb"]
    new["iajb"] += 2.0 * tvt["iajb"] + 2.0 * tvt["jbia"]  # t v t is symmetric: 4 t v t
    new.divide_by_denominators_((1, -1, 1, -1))
    return new


def kernel(cc: DRCCD) -> DRCCD:
    ctx = cc.context
    p = restricted_problem(cc.mf, frozen=cc.frozen, tile=cc.tile, context=ctx)
    cc.problem = p
    t = Tensor([p.occ, p.vir, p.occ, p.vir], [bra_ket_swap()], name="t2", context=ctx)
    t["iajb"] = p.ovov["iajb"]
    t.divide_by_denominators_((1, -1, 1, -1))
    e_old = energy(t, p)
    diis = DIIS(cc.diis_space) if cc.diis_space > 0 else None
    cc.converged = False
    for cycle in range(1, cc.max_cycle + 1):
        start = time.perf_counter()
        new = update_amps(t, p)
        old_vec, vec = t.to_vector(), new.to_vector()
        residual = float(((vec - old_vec) ** 2).sum() ** 0.5)
        if diis is not None and cycle > 1:
            new.from_vector_(diis.update(vec, vec - old_vec))
        t = new
        e_new = energy(t, p)
        cc.cycles = cycle
        if cc.callback is not None:
            cc.callback(
                IterationRecord(cycle, e_new, e_new - e_old, residual, time.perf_counter() - start)
            )
        done = abs(e_new - e_old) < cc.conv_tol and residual < cc.conv_tol_normt
        e_old = e_new
        if done:
            cc.converged = True
            break
    cc.e_corr, cc.t2 = e_old, t
    if not cc.converged:
        warnings.warn(
            f"DRCCD did not converge in {cc.max_cycle} iterations; raise max_cycle.",
            RuntimeWarning,
            stacklevel=2,
        )
    return cc
