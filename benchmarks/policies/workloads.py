"""The work the policies are compared on: one CCSD iteration of a molecule, and the CCD
sub-computation of paper 004 (section 6.4). Each workload builds its tensors once per tile size in
one Context; the driver reconfigures that context for every policy and thread count."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscf import gto, scf

import tilecc
from tilecc.cc import RCCSD

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import METHANOL, NITROGEN


@dataclass
class CcsdIteration:
    """One closed-shell CCSD iteration from the MP2 amplitudes (the same work every time)."""

    name: str
    basis: str
    atoms: list[str]
    symmetry: bool
    _mf: Any = field(default=None, init=False)

    def prepare(self, tile: int) -> tilecc.Context:
        if self._mf is None:
            mol = gto.M(atom=self.atoms, basis=self.basis, symmetry=self.symmetry, verbose=0)
            self._mf = scf.RHF(mol).run(conv_tol=1e-10)
        self._solver = RCCSD(self._mf, tile=tile, threads=1)
        self._problem = self._solver.build_problem()
        self._amplitudes = self._solver.initial_amplitudes(self._problem)
        return self._solver.context

    def iteration(self) -> None:
        # As the solver runs it: the update's operations queued, its plans built together.
        with self._solver.context.deferred():
            self._solver.update(self._amplitudes, self._problem)


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

    def prepare(self, tile: int) -> tilecc.Context:
        ctx = tilecc.Context(threads=1)

        def segmented(sizes: tuple[int, ...], kind: str, name: str) -> tilecc.Space:
            irreps = [irrep for irrep, n in enumerate(sizes) for _ in range(n // self.scale)]
            return tilecc.Space.spatial(len(irreps), tile=tile, kind=kind, name=name, irreps=irreps)

        o = segmented((40, 40, 20, 20), "occupied", "O")
        v = segmented((100, 100, 60, 60), "virtual", "V")
        self.t = tilecc.Tensor([v, v, o, o], name="t", context=ctx)
        self.v1 = tilecc.Tensor([o, v, o, v], name="v1", context=ctx)
        self.v2 = tilecc.Tensor([o, o, v, v], name="v2", context=ctx)
        self.i1 = tilecc.Tensor([o, v, o, v], name="i1", context=ctx)
        self.i0 = tilecc.Tensor([v, v, o, o], name="i0", context=ctx)
        for seed, tensor in enumerate((self.t, self.v1, self.v2)):
            tensor.fill_random_(seed=seed)
        return ctx

    def iteration(self) -> None:
        # tilecc's labels: h1, h2, h6, h8 -> i, j, m, n (occupied); p3, p4, p5, p7 -> a, b, c, d.
        i1, i0, t = self.i1, self.i0, self.t
        i1["maic"] = self.v1["maic"]
        i1["maic"] += t["adin"] * self.v2["mncd"]
        i0["abij"] = t["acim"] * i1["mbjc"]


def workloads(scale: int) -> list[Any]:
    return [
        CcsdIteration("N2/cc-pVTZ (D2h) CCSD iteration", "cc-pvtz", NITROGEN, True),
        CcsdIteration("methanol/cc-pVDZ (C1) CCSD iteration", "cc-pvdz", METHANOL, False),
        CcdSubcomputation(scale),
    ]
