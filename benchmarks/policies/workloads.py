"""The work the policies are compared on: one CCSD iteration of a molecule, and the CCD
sub-computation of paper 004 (section 6.4). A workload prepares instances: its tensors at one tile
size in a Context of their own, and the iteration that runs on them. The driver prepares one
instance per policy, so that the policies' iterations can take turns, and reconfigures each for
every thread count."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscf import gto, scf

import tilecc
from tilecc.cc import RCCSD
from tilecc.host.pyscf import chemical_core

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import METHANOL, NITROGEN


@dataclass
class Instance:
    """A workload's tensors at one tile size, in their own context, and its iteration on them."""

    context: tilecc.Context
    iteration: Callable[[], None]


@dataclass
class CcsdIteration:
    """One closed-shell CCSD iteration from the MP2 amplitudes (the same work every time)."""

    name: str
    basis: str
    atoms: list[str]
    symmetry: bool
    _mf: Any = field(default=None, init=False)

    def prepare(self, tile: int) -> Instance:
        if self._mf is None:
            mol = gto.M(atom=self.atoms, basis=self.basis, symmetry=self.symmetry, verbose=0)
            self._mf = scf.RHF(mol).run(conv_tol=1e-10)
        solver = RCCSD(self._mf, frozen=chemical_core(self._mf.mol), tile=tile, threads=1)
        problem = solver.build_problem()
        amplitudes = solver.initial_amplitudes(problem)

        def iteration() -> None:
            # As the solver runs it: the update's operations queued, its plans built together.
            with solver.context.deferred():
                solver.update(amplitudes, problem)

        return Instance(solver.context, iteration)


@dataclass
class CcdSubcomputation:
    """Paper 004's CCD sub-computation with O and V cut into four symmetry segments as there,
    (40, 40, 20, 20) and (100, 100, 60, 60), divided by ``scale``:

        i1[h6,p3,h1,p5] += v1[h6,p3,h1,p5]
        i1[h6,p3,h1,p5] += t[p3,p7,h1,h8] * v2[h6,h8,p5,p7]
        i0[p3,p4,h1,h2] += t[p3,p5,h1,h6] * i1[h6,p4,h2,p5]
    """

    scale: int = 4
    name: str = "CCD sub-computation (paper 004)"

    def prepare(self, tile: int) -> Instance:
        ctx = tilecc.Context(threads=1)

        def segmented(sizes: tuple[int, ...], kind: str, name: str) -> tilecc.Space:
            irreps = [irrep for irrep, n in enumerate(sizes) for _ in range(n // self.scale)]
            return tilecc.Space.spatial(len(irreps), tile=tile, kind=kind, name=name, irreps=irreps)

        o = segmented((40, 40, 20, 20), "occupied", "O")
        v = segmented((100, 100, 60, 60), "virtual", "V")
        t = tilecc.Tensor([v, v, o, o], name="t", context=ctx)
        v1 = tilecc.Tensor([o, v, o, v], name="v1", context=ctx)
        v2 = tilecc.Tensor([o, o, v, v], name="v2", context=ctx)
        i1 = tilecc.Tensor([o, v, o, v], name="i1", context=ctx)
        i0 = tilecc.Tensor([v, v, o, o], name="i0", context=ctx)
        for seed, tensor in enumerate((t, v1, v2)):
            tensor.fill_random_(seed=seed)

        def iteration() -> None:
            # Labels: h1, h2, h6, h8 -> i, j, m, n (occupied); p3, p4, p5, p7 -> a, b, c, d.
            i1["maic"] = v1["maic"]
            i1["maic"] += t["adin"] * v2["mncd"]
            i0["abij"] = t["acim"] * i1["mbjc"]

        return Instance(ctx, iteration)


def workloads(scale: int) -> list[Any]:
    return [
        CcsdIteration("N2/cc-pVTZ (D2h) CCSD iteration", "cc-pvtz", NITROGEN, True),
        CcsdIteration("methanol/cc-pVDZ (C1) CCSD iteration", "cc-pvdz", METHANOL, False),
        CcdSubcomputation(scale),
    ]
