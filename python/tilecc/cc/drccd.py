"""Direct-ring CCD (drCCD) for closed-shell RHF references: the ring-diagram approximation used
by cc4s, whose correlation energy equals that of the direct random-phase approximation.

Spatial orbitals, chemists' integrals v_iajb = (ia|jb), amplitudes t_iajb = t_ij^ab with the
symmetry t_iajb = t_jbia. Equations (G. E. Scuseria, T. M. Henderson, D. C. Sorensen, J. Chem.
Phys. 129, 231101 (2008)):

    0 = v + D t + 2 v t + 2 t v + 4 t v t,   E = 2 sum_iajb v_iajb t_iajb

with (x y)_iajb = sum_kc x_iakc y_kcjb and D_iajb = e_a + e_b - e_i - e_j.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from tilecc import mpi
from tilecc.cc.ring_grid import RingGrid, check_kind
from tilecc.cc.solver import Amplitudes, AmplitudeSolver
from tilecc.host.pyscf import RestrictedProblem, restricted_problem
from tilecc.symmetry import bra_ket_swap
from tilecc.tensor import Tensor


@dataclass
class DRCCD(AmplitudeSolver):
    """drCCD shaped like PySCF's CC classes: ``DRCCD(mf).run()``; results ``converged``,
    ``e_corr``, ``e_tot``, ``t2``, ``cycles``."""

    #: On several ranks, lay every [o, v, o, v] tensor out on a processor grid (paper 002, see
    #: tilecc.cc.ring_grid): "default" (node-oblivious) or "node-aware"; None: the store's hash
    #: owners. Tasks then run where their output block lives (placement "owner", unless another
    #: placement is given).
    grid: str | None = None
    #: The grid chosen for this job's spaces (None without one).
    ring_grid: RingGrid | None = field(default=None, init=False)

    method: ClassVar[str] = "drccd"
    formalism: ClassVar[str] = "spin-adapted"

    def __post_init__(self) -> None:
        check_kind(self.grid, mpi.world().size)
        if self.grid is not None and self.placement is None and self.context is None:
            self.placement = "owner"
        super().__post_init__()

    @property
    def t2(self) -> Tensor | None:
        return self.amplitudes[0] if self.amplitudes else None

    def build_problem(self) -> RestrictedProblem:
        p = restricted_problem(self.mf, frozen=self.frozen, tile=self.tile, context=self.context)
        if self.grid is not None:
            world = mpi.world()
            self.ring_grid = RingGrid.choose(
                self.grid,
                occupied=p.occ.size,
                virtual=p.vir.size,
                ranks=world.size,
                per_node=world.ranks_per_node,
            )
            self.ring_grid.lay_out(p.ovov)
        return p

    def _lay_out(self) -> Callable[[Tensor], Tensor]:
        return self.ring_grid.lay_out if self.ring_grid is not None else _as_it_is

    def initial_amplitudes(self, problem: RestrictedProblem) -> Amplitudes:
        t = self._lay_out()(
            Tensor(
                [problem.occ, problem.vir, problem.occ, problem.vir],
                [bra_ket_swap()],
                name="t2",
                context=self.context,
            )
        )
        t["iajb"] = problem.ovov["iajb"]
        t.divide_by_denominators_((1, -1, 1, -1))
        return (t,)

    def update(self, amplitudes: Amplitudes, problem: RestrictedProblem) -> Amplitudes:
        return (update_amps(amplitudes[0], problem, self._lay_out()),)

    def energy(self, amplitudes: Amplitudes, problem: RestrictedProblem) -> float:
        return energy(amplitudes[0], problem)


def energy(t: Tensor, p: RestrictedProblem) -> float:
    return 2.0 * float(p.ovov["iajb"] * t["iajb"])


def _as_it_is(tensor: Tensor) -> Tensor:
    return tensor


def update_amps(
    t: Tensor, p: RestrictedProblem, lay_out: Callable[[Tensor], Tensor] = _as_it_is
) -> Tensor:
    """t_new = (v + 2 v t + 2 t v + 4 t v t) / (e_i + e_j - e_a - e_b); ``lay_out`` places each
    intermediate's blocks before it is written (the new amplitudes are laid out like t)."""
    ctx, v = t.context, p.ovov
    o, vir = p.occ, p.vir
    tv = lay_out(Tensor([o, vir, o, vir], name="t.v", context=ctx))
    tv["iald"] = t["iakc"] * v["kcld"]
    tvt = lay_out(Tensor([o, vir, o, vir], name="t.v.t", context=ctx))
    tvt["iajb"] = tv["iald"] * t["ldjb"]
    new = Tensor.like(t, name="t2")
    new["iajb"] = v["iajb"] + 2.0 * v["iakc"] * t["kcjb"] + 2.0 * t["iakc"] * v["kcjb"]
    new["iajb"] += 2.0 * tvt["iajb"] + 2.0 * tvt["jbia"]  # t v t is symmetric: 4 t v t
    new.divide_by_denominators_((1, -1, 1, -1))
    return new
