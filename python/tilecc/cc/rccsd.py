"""Spin-adapted closed-shell CCSD (RCCSD): the fast path for RHF references.

Spatial orbitals, chemists' integrals (pq|rs), amplitudes t1[i,a] and t2[i,j,a,b] with
t_ij^ab = t_ji^ba. Equations and intermediates as in PySCF's rccsd/rintermediates, after
G. E. Scuseria, A. C. Scheiner, T. J. Lee, J. E. Rice, H. F. Schaefer, J. Chem. Phys. 86, 2881
(1987) and T. Helgaker, P. Jorgensen, J. Olsen, "Molecular Electronic-Structure Theory",
ch. 13, written in tilecc's expression API (point-group blocks, symmetric storage, plan reuse).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from tilecc.cc.solver import Amplitudes, AmplitudeSolver, SinglesAndDoubles
from tilecc.host.pyscf import RestrictedProblem, restricted_problem
from tilecc.space import Space
from tilecc.symmetry import bra_ket_swap, pair_swap
from tilecc.tensor import Tensor

CLASSES = ("ovov", "oovv", "ovoo", "oooo", "ovvv", "vvvv")
PAIR = [pair_swap()]


@dataclass
class RCCSD(SinglesAndDoubles, AmplitudeSolver):
    """Closed-shell CCSD shaped like PySCF's ``cc.RCCSD``: ``RCCSD(mf).run()``; results
    ``converged``, ``e_corr``, ``e_tot``, ``t1``, ``t2``, ``cycles``."""

    method: ClassVar[str] = "ccsd"
    formalism: ClassVar[str] = "spin-adapted"

    def build_problem(self) -> RestrictedProblem:
        problem = restricted_problem(
            self.mf, frozen=self.frozen, tile=self.tile, context=self.context, classes=CLASSES
        )
        add_spin_adapted(problem)
        return problem

    def initial_amplitudes(self, problem: RestrictedProblem) -> Amplitudes:
        t1 = Tensor([problem.occ, problem.vir], name="t1", context=self.context)
        t1["ia"] = problem.fock["ov"]["ia"]
        t1.divide_by_denominators_((1, -1))
        t2 = Tensor(
            [problem.occ, problem.occ, problem.vir, problem.vir],
            PAIR,
            name="t2",
            context=self.context,
        )
        t2["ijab"] = problem.eri["ovov"]["iajb"]
        t2.divide_by_denominators_((1, 1, -1, -1))
        return t1, t2

    def update(self, amplitudes: Amplitudes, problem: RestrictedProblem) -> Amplitudes:
        return update_amps(amplitudes[0], amplitudes[1], problem)

    def energy(self, amplitudes: Amplitudes, problem: RestrictedProblem) -> float:
        return energy(amplitudes[0], amplitudes[1], problem)

    def triples_energy(self, progress: Callable[[int, int], None] | None) -> float:
        from tilecc.cc.triples import restricted_triples

        assert self.t1 is not None and self.t2 is not None
        return restricted_triples(self.t1, self.t2, self.problem, progress)


def add_spin_adapted(p: RestrictedProblem) -> None:
    """Add to ``p.eri`` the combinations of integrals that the equations contract only together,
    formed once, since integrals do not change between iterations: L(ovov), L(ovoo) and L(ovvv),
    with L_pqrs = 2 (pq|rs) - (ps|rq), and J-K(ovov)_pqrs = 2 (pq|rs) - (pr|qs). Each takes the
    place of two contractions in each of the one to four terms that use it (the energy's
    included), which is nine contractions (and plans) fewer per iteration."""
    w = p.eri
    spaces = {"o": p.occ, "v": p.vir}
    # Each combination: 2 (pq|rs) from the class `direct`, minus the class `exchange` read with
    # the labels `exchange_labels`; it runs over the spaces of `direct`.
    for name, symmetry, direct, exchange, exchange_labels in (
        ("L(ovov)", [bra_ket_swap()], "ovov", "ovov", "psrq"),
        ("L(ovoo)", [], "ovoo", "ovoo", "rqps"),
        ("L(ovvv)", [], "ovvv", "ovvv", "psrq"),
        ("J-K(ovov)", [bra_ket_swap()], "ovov", "oovv", "prqs"),
    ):
        t = Tensor([spaces[x] for x in direct], symmetry, name=name, context=w[direct].context)
        t["pqrs"] = 2.0 * w[direct]["pqrs"] - w[exchange][exchange_labels]
        w[name] = t


def tau_of(t1: Tensor, t2: Tensor) -> Tensor:
    """tau_ij^ab = t_ij^ab + t_i^a t_j^b."""
    tau = Tensor.like(t2, name="tau")
    tau["ijab"] = t2["ijab"]
    tau["ijab"] += t1["ia"] * t1["jb"]
    return tau


def energy(t1: Tensor, t2: Tensor, p: RestrictedProblem) -> float:
    """E = 2 f_ia t_ia + sum (2 (ia|jb) - (ib|ja)) tau_ij^ab, the integrals read as L(ovov)."""
    tau = tau_of(t1, t2)
    singles = float(p.fock["ov"]["ia"] * t1["ia"])
    return 2.0 * singles + float(p.eri["L(ovov)"]["iajb"] * tau["ijab"])


def update_amps(t1: Tensor, t2: Tensor, p: RestrictedProblem) -> tuple[Tensor, Tensor]:
    ctx = t1.context
    o, v = p.occ, p.vir
    f, w = p.fock, p.eri
    ovov, oovv, ovoo, oooo, ovvv, vvvv = (w[k] for k in CLASSES)
    l_ovov, l_ovoo, l_ovvv, jk_ovov = (w[k] for k in ("L(ovov)", "L(ovoo)", "L(ovvv)", "J-K(ovov)"))

    def new(spaces: list[Space], symmetry: list[Any] | None = None, name: str = "") -> Tensor:
        return Tensor(spaces, symmetry or [], name=name, context=ctx)

    tau = tau_of(t1, t2)
    # Fock-like intermediates
    foo = new([o, o], name="Foo")
    foo["ki"] = f["oo"]["ki"] + l_ovov["kcld"] * tau["ilcd"]
    fvv = new([v, v], name="Fvv")
    fvv["ac"] = f["vv"]["ac"] - l_ovov["kcld"] * tau["klad"]
    fov = new([o, v], name="Fov")
    fov["kc"] = f["ov"]["kc"] + l_ovov["kcld"] * t1["ld"]
    loo = new([o, o], name="Loo")
    loo["ki"] = foo["ki"] + f["ov"]["kc"] * t1["ic"]
    loo["ki"] += l_ovoo["lcki"] * t1["lc"]
    lvv = new([v, v], name="Lvv")
    lvv["ac"] = fvv["ac"] - f["ov"]["kc"] * t1["ka"]
    lvv["ac"] += l_ovvv["kdac"] * t1["kd"]
    e_o = Tensor.diagonal(o, o.energies, name="e_o", context=ctx)
    e_v = Tensor.diagonal(v, v.energies, name="e_v", context=ctx)
    foo["ki"] -= e_o["ki"]
    fvv["ac"] -= e_v["ac"]
    loo["ki"] -= e_o["ki"]
    lvv["ac"] -= e_v["ac"]

    # T1
    t1new = new([o, v], name="t1")
    t1new["ia"] = f["ov"]["ia"] + fvv["ac"] * t1["ic"]
    t1new["ia"] -= foo["ki"] * t1["ka"]
    u = new([v, v], name="f.t1")
    u["ac"] = f["ov"]["kc"] * t1["ka"]
    t1new["ia"] -= 2.0 * t1["ic"] * u["ac"]
    t1new["ia"] += 2.0 * fov["kc"] * t2["kica"]
    t1new["ia"] -= fov["kc"] * t2["ikca"]
    z = new([o, o], name="Fov.t1")
    z["ik"] = t1["ic"] * fov["kc"]
    t1new["ia"] += z["ik"] * t1["ka"]
    t1new["ia"] += jk_ovov["kcia"] * t1["kc"]  # 2 (kc|ai) - (ki|ac), (kc|ai) = (kc|ia)
    t1new["ia"] += l_ovvv["kdac"] * tau["ikcd"]
    t1new["ia"] -= l_ovoo["lcki"] * tau["klac"]

    # T2: terms linear and quadratic in t1
    x = new([v, v, o, v], name="tmp2")
    x["abic"] = ovvv["iacb"] - oovv["kibc"] * t1["ka"]
    y = new([o, o, v, v], name="tmp")
    y["ijab"] = x["abic"] * t1["jc"]
    t2new = Tensor.like(t2, name="t2")
    t2new["ijab"] = ovov["iajb"] + y["ijab"] + y["jiba"]
    x2 = new([v, o, o, o], name="tmp2'")
    x2["akij"] = ovoo["iajk"] + ovov["kcia"] * t1["jc"]
    y2 = new([o, o, v, v], name="tmp'")
    y2["ijab"] = x2["akij"] * t1["kb"]
    t2new["ijab"] -= y2["ijab"] + y2["jiba"]

    # Four-index intermediates
    woooo = new([o, o, o, o], PAIR, name="Woooo")
    woooo["klij"] = oooo["kilj"] + ovoo["lcki"] * t1["jc"] + ovoo["kclj"] * t1["ic"]
    woooo["klij"] += ovov["kcld"] * tau["ijcd"]
    # The ladder's t1 dressing, -(kd|ac) t_k^b - (kc|bd) t_k^a, is applied through the o^3 v
    # intermediate Y_kaij = (kd|ac) tau_ij^cd instead of a dressed v^4 copy of (ac|bd): the second
    # term is the first with (i,a) and (j,b) swapped.
    y = new([o, v, o, o], name="ovvv.tau")
    y["kaij"] = tau["ijcd"] * ovvv["kdac"]  # integral second: see the ladder below
    ladder_t1 = new([o, o, v, v], name="ladder.t1")
    ladder_t1["ijab"] = y["kaij"] * t1["kb"]
    half_t2 = new([o, o, v, v], name="t2/2+t1t1")
    half_t2["ilda"] = 0.5 * t2["ilda"]
    half_t2["ilda"] += t1["id"] * t1["la"]
    wvoov = new([v, o, o, v], name="Wvoov")
    wvoov["akic"] = ovov["kcia"] + ovvv["kcad"] * t1["id"] - ovoo["kcli"] * t1["la"]
    # (ld|kc) contracts with t2_il^ad - (t2/2 + t1 t1)_il^da: one o^3 v^3 contraction, not two.
    t2_less_half = new([o, o, v, v], name="t2-t2/2-t1t1")
    t2_less_half["ilda"] = t2["ilad"] - half_t2["ilda"]
    wvoov["akic"] += ovov["ldkc"] * t2_less_half["ilda"]
    wvoov["akic"] -= 0.5 * ovov["lckd"] * t2["ilad"]
    wvovo = new([v, o, v, o], name="Wvovo")
    wvovo["akci"] = oovv["kiac"] + ovvv["kdac"] * t1["id"] - ovoo["lcki"] * t1["la"]
    wvovo["akci"] -= ovov["lckd"] * half_t2["ilda"]

    t2new["ijab"] += woooo["klij"] * tau["klab"]
    # The integral comes second: the engine stacks the output blocks that read the same blocks of
    # a contraction's second operand into one task, which permutes each of those blocks once. With
    # (ac|bd) second, every occupied pair tile of one irrep shares its permutation into GEMM
    # layout; first, each pair tile would permute it again.
    t2new["ijab"] += tau["ijcd"] * vvvv["acbd"]
    t2new["ijab"] -= ladder_t1["ijab"] + ladder_t1["jiba"]
    r = new([o, o, v, v], name="ring")
    r["ijab"] = lvv["ac"] * t2["ijcb"] - loo["ki"] * t2["kjab"]
    # 2 W_akic - W_akci contracts with t2_kj^cb: one o^3 v^3 contraction, not two.
    w_ring = new([v, o, o, v], name="2Wvoov-Wvovo")
    w_ring["akic"] = 2.0 * wvoov["akic"] - wvovo["akci"]
    r["ijab"] += w_ring["akic"] * t2["kjcb"]
    r["ijab"] -= wvoov["akic"] * t2["kjbc"]
    r["ijab"] -= wvovo["bkci"] * t2["kjac"]
    t2new["ijab"] += r["ijab"] + r["jiba"]

    t1new.divide_by_denominators_((1, -1))
    t2new.divide_by_denominators_((1, 1, -1, -1))
    return t1new, t2new
