"""Spin-orbital CCSD and CCD for any single-determinant reference (RHF, UHF, ROHF).

Equations: J. F. Stanton, J. Gauss, J. D. Watts, R. J. Bartlett, J. Chem. Phys. 94, 4334 (1991),
in the intermediates of PySCF's gccsd (Fae, Fmi, Fme, Wmnij, Wabef, Wmbej), written in tilecc's
expression API so that spin and point-group blocking, permutational symmetry, threads and plan
reuse come from the engine. Integrals: antisymmetrized physicists' notation <pq||rs>; the
non-canonical (ROHF) Fock terms are kept because every Fock block enters the equations.

    >>> from pyscf import gto, scf
    >>> mol = gto.M(atom="H 0 0 0; H 0 0 0.74", basis="6-31g", verbose=0)
    >>> cc = GCCSD(scf.RHF(mol).run(), tile=4, threads=1).run()
    >>> bool(cc.converged), round(cc.e_corr, 6)
    (True, -0.024917)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from tilecc.cc.solver import Amplitudes, AmplitudeSolver, SinglesAndDoubles
from tilecc.context import Context
from tilecc.host.pyscf import SpinOrbitalProblem, spin_orbital_problem
from tilecc.space import Space
from tilecc.symmetry import antisymmetric, antisymmetric_pairs, pair_swap
from tilecc.tensor import Tensor

ANTI = antisymmetric_pairs()


@dataclass
class GCCSD(SinglesAndDoubles, AmplitudeSolver):
    """Spin-orbital CCSD for RHF, UHF and ROHF references, shaped like PySCF's ``cc.GCCSD``:
    ``GCCSD(mf).run()``; results ``converged``, ``e_corr``, ``e_tot``, ``t1``, ``t2``,
    ``cycles``, and ``e_t`` after :meth:`ccsd_t`."""

    #: ROHF references only: iterate on the semicanonical orbitals (host.pyscf's
    #: semicanonical_orbitals), on which the standard ROHF-(T) is defined. None means "when (T)
    #: is asked for" (``with_t``), as Psi4 does: ROHF-CCSD alone keeps the ROHF orbitals, which
    #: gives another energy once orbitals are frozen.
    semicanonical: bool | None = None

    method: ClassVar[str] = "ccsd"
    formalism: ClassVar[str] = "spin-orbital"
    #: CCSD iterates singles and doubles; CCD (a subclass) keeps t1 = 0.
    singles: ClassVar[bool] = True

    def triples_energy(self, progress: Callable[[int, int], None] | None) -> float:
        from tilecc.cc.triples import spin_orbital_triples

        if not self.singles:
            return super().triples_energy(progress)
        if self.problem.reference == "rohf" and not self.problem.semicanonical:
            raise ValueError(
                "ROHF-(T) is defined on semicanonical orbitals, but these amplitudes were "
                "iterated on the ROHF ones; run CCSD_T(mf), or CCSD(mf, semicanonical=True) "
                "before ccsd_t()."
            )
        assert self.t1 is not None and self.t2 is not None
        return spin_orbital_triples(self.t1, self.t2, self.problem, progress)

    def build_problem(self) -> SpinOrbitalProblem:
        semicanonical = self.with_t if self.semicanonical is None else self.semicanonical
        return spin_orbital_problem(
            self.mf,
            frozen=self.frozen,
            tile=self.tile,
            context=self.context,
            semicanonical=bool(semicanonical),
        )

    def initial_amplitudes(self, problem: SpinOrbitalProblem) -> Amplitudes:
        t1, t2 = init_amps(problem, self.context)
        if not self.singles:
            t1.zero_()
        return t1, t2

    def update(self, amplitudes: Amplitudes, problem: SpinOrbitalProblem) -> Amplitudes:
        t1, t2 = update_amps(amplitudes[0], amplitudes[1], problem)
        if not self.singles:
            t1.zero_()
        return t1, t2

    def energy(self, amplitudes: Amplitudes, problem: SpinOrbitalProblem) -> float:
        return energy(amplitudes[0], amplitudes[1], problem)


@dataclass
class GCCD(GCCSD):
    """Spin-orbital CCD: CCSD's equations with the singles held at zero."""

    method: ClassVar[str] = "ccd"
    singles: ClassVar[bool] = False


def energy(t1: Tensor, t2: Tensor, p: SpinOrbitalProblem) -> float:
    """E = f_ia t_ia + 1/4 <ij||ab> t_ijab + 1/2 <ij||ab> t_ia t_jb."""
    ctx = t1.context
    x = Tensor([p.occ, p.occ, p.vir, p.vir], [pair_swap()], name="t1t1", context=ctx)
    x["ijab"] = t1["ia"] * t1["jb"]
    return (
        float(p.fock["ov"]["ia"] * t1["ia"])
        + 0.25 * float(p.eri["oovv"]["ijab"] * t2["ijab"])
        + 0.5 * float(p.eri["oovv"]["ijab"] * x["ijab"])
    )


def init_amps(p: SpinOrbitalProblem, ctx: Context) -> tuple[Tensor, Tensor]:
    """MP2-like guess: t1 = f_ia / D_ia, t2 = <ij||ab> / D_ijab."""
    t1 = Tensor([p.occ, p.vir], name="t1", context=ctx)
    t2 = Tensor([p.occ, p.occ, p.vir, p.vir], ANTI, name="t2", context=ctx)
    t1["ia"] = p.fock["ov"]["ia"]
    t1.divide_by_denominators_((1, -1))
    t2["ijab"] = p.eri["oovv"]["ijab"]
    t2.divide_by_denominators_((1, 1, -1, -1))
    return t1, t2


def _tau(t1: Tensor, t2: Tensor, factor: float, name: str) -> Tensor:
    """t2 + factor * (t_ia t_jb - t_ib t_ja): tau (factor 1) and tau-tilde (factor 1/2)."""
    o, v = t1.spaces
    x = Tensor([o, o, v, v], [pair_swap()], name="t1t1", context=t1.context)
    x["ijab"] = t1["ia"] * t1["jb"]
    tau = Tensor.like(t2, name=name)
    tau["ijab"] = t2["ijab"] + factor * x["ijab"] - factor * x["ijba"]
    return tau


def update_amps(t1: Tensor, t2: Tensor, p: SpinOrbitalProblem) -> tuple[Tensor, Tensor]:
    """One CCSD iteration: the new (t1, t2)."""
    ctx = t1.context
    o, v = p.occ, p.vir
    f, w = p.fock, p.eri

    def new(
        spaces: list[Space], symmetry: list[Any] | None = None, name: str = "", **kwargs: Any
    ) -> Tensor:
        return Tensor(spaces, symmetry or [], name=name, context=ctx, **kwargs)

    tau = _tau(t1, t2, 1.0, "tau")
    tau_tilde = _tau(t1, t2, 0.5, "tau~")

    fvv = new([v, v], name="Fvv")
    fvv["ae"] = f["vv"]["ae"] - 0.5 * f["ov"]["me"] * t1["ma"]
    fvv["ae"] += t1["mf"] * w["ovvv"]["mafe"]
    fvv["ae"] -= 0.5 * tau_tilde["mnaf"] * w["oovv"]["mnef"]
    foo = new([o, o], name="Foo")
    foo["mi"] = f["oo"]["mi"] + 0.5 * f["ov"]["me"] * t1["ie"]
    foo["mi"] += t1["ne"] * w["ooov"]["mnie"]
    foo["mi"] += 0.5 * tau_tilde["inef"] * w["oovv"]["mnef"]
    fov = new([o, v], name="Fov")
    fov["me"] = f["ov"]["me"] + t1["nf"] * w["oovv"]["mnef"]

    tmp = new([o, o, o, o], [antisymmetric(4, 0, 1)], name="t1*ooov")
    tmp["mnij"] = t1["je"] * w["ooov"]["mnie"]
    woooo = new([o, o, o, o], ANTI, name="Woooo")
    woooo["mnij"] = w["oooo"]["mnij"] + tmp["mnij"] - tmp["mnji"]
    woooo["mnij"] += 0.25 * tau["ijef"] * w["oovv"]["mnef"]

    y = new([v, v, v, v], [antisymmetric(4, 2, 3)], name="t1*ovvv")
    y["abef"] = t1["ma"] * w["ovvv"]["mbef"]
    wvvvv = new([v, v, v, v], ANTI, name="Wvvvv")
    wvvvv["abef"] = w["vvvv"]["abef"] - y["abef"] + y["baef"]
    wvvvv["abef"] += 0.25 * tau["mnab"] * w["oovv"]["mnef"]

    u = new([o, o, v, v], name="t2/2+t1t1")
    u["jnfb"] = 0.5 * t2["jnfb"]
    u["jnfb"] += t1["jf"] * t1["nb"]
    wovvo = new([o, v, v, o], name="Wovvo")
    wovvo["mbej"] = t1["jf"] * w["ovvv"]["mbef"] - w["ovov"]["mbje"]
    wovvo["mbej"] += t1["nb"] * w["ooov"]["mnje"]
    wovvo["mbej"] -= u["jnfb"] * w["oovv"]["mnef"]

    # Energies move to the other side of the equations (they return in the denominators).
    fvv["ae"] -= Tensor.diagonal(v, v.energies, name="e_v", context=ctx)["ae"]
    foo["mi"] -= Tensor.diagonal(o, o.energies, name="e_o", context=ctx)["mi"]

    t1new = new([o, v], name="t1")
    t1new["ia"] = f["ov"]["ia"] + t1["ie"] * fvv["ae"]
    t1new["ia"] -= t1["ma"] * foo["mi"]
    t1new["ia"] += t2["imae"] * fov["me"]
    t1new["ia"] -= t1["nf"] * w["ovov"]["naif"]
    t1new["ia"] -= 0.5 * t2["imef"] * w["ovvv"]["maef"]
    t1new["ia"] -= 0.5 * t2["mnae"] * w["ooov"]["mnie"]

    t2new = Tensor.like(t2, name="t2")
    t2new["ijab"] = w["oovv"]["ijab"]
    ftmp = new([v, v], name="Fvv'")
    ftmp["be"] = fvv["be"] - 0.5 * t1["mb"] * fov["me"]
    z = new([o, o, v, v], [antisymmetric(4, 0, 1)], name="t2*Fvv")
    z["ijab"] = t2["ijae"] * ftmp["be"]
    t2new["ijab"] += z["ijab"] - z["ijba"]
    gtmp = new([o, o], name="Foo'")
    gtmp["mj"] = foo["mj"] + 0.5 * t1["je"] * fov["me"]
    z2 = new([o, o, v, v], [antisymmetric(4, 2, 3)], name="t2*Foo")
    z2["ijab"] = t2["imab"] * gtmp["mj"]
    t2new["ijab"] -= z2["ijab"] - z2["jiab"]
    t2new["ijab"] += 0.5 * tau["mnab"] * woooo["mnij"]
    t2new["ijab"] += 0.5 * tau["ijef"] * wvvvv["abef"]
    q = new([o, v, o, v], name="t1t1'", spin_sides=(1, -1, 1, -1))
    q["iema"] = t1["ie"] * t1["ma"]
    ring = new([o, o, v, v], name="ring")
    ring["ijab"] = t2["imae"] * wovvo["mbej"] + q["iema"] * w["ovov"]["mbje"]
    t2new["ijab"] += ring["ijab"] - ring["jiab"] - ring["ijba"] + ring["jiba"]
    z3 = new([o, o, v, v], [antisymmetric(4, 2, 3)], name="t1*ovvv'")
    z3["ijab"] = t1["ie"] * w["ovvv"]["jeba"]
    t2new["ijab"] += z3["ijab"] - z3["jiab"]
    z4 = new([o, o, v, v], [antisymmetric(4, 0, 1)], name="t1*ooov'")
    z4["ijab"] = t1["ma"] * w["ooov"]["ijmb"]
    t2new["ijab"] -= z4["ijab"] - z4["ijba"]

    t1new.divide_by_denominators_((1, -1))
    t2new.divide_by_denominators_((1, 1, -1, -1))
    return t1new, t2new
