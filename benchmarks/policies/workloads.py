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
sys.path.insert(0, str(Path(__file__).parents[1]))
from molecules import METHANOL, NITROGEN
from paper004 import ccd_tensors


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
    """Paper 004's CCD sub-computation (benchmarks/paper004.py), its segments divided by
    ``scale``."""

    scale: int = 4
    name: str = "CCD sub-computation (paper 004)"

    def prepare(self, tile: int) -> Instance:
        ctx = tilecc.Context(threads=1)
        x = ccd_tensors(ctx, 1 / self.scale, tile, tile)

        def iteration() -> None:
            x.initialise()
            x.contract()

        return Instance(ctx, iteration)


def workloads(scale: int) -> list[Any]:
    return [
        CcsdIteration("N2/cc-pVTZ (D2h) CCSD iteration", "cc-pvtz", NITROGEN, True),
        CcsdIteration("methanol/cc-pVDZ (C1) CCSD iteration", "cc-pvdz", METHANOL, False),
        CcdSubcomputation(scale),
    ]
