"""The energy does not depend on symmetry use, tile size or thread count: the full matrix of
symmetry on/off x tiles 1, 4, 24 x threads 1, 2, each against PySCF computed once in the test."""

from __future__ import annotations

import functools

import pytest
from pyscf import cc, gto, scf

import tilecc

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-9}
CASES = {
    # name: (charge, 2S, reference) -> RHF takes RCCSD, UHF takes GCCSD
    "rhf water": (0, 0, scf.RHF),
    "uhf water cation": (1, 1, scf.UHF),
}


@functools.cache
def mean_field(case: str, symmetry: bool):
    charge, spin, kind = CASES[case]
    mol = gto.M(atom=WATER, basis="6-31g", charge=charge, spin=spin, symmetry=symmetry, verbose=0)
    return kind(mol).run(conv_tol=1e-12)


@functools.cache
def reference_energy(case: str) -> float:
    mf = mean_field(case, False)
    ref = cc.CCSD(mf, frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    ref.run()
    return float(ref.e_tot)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("symmetry", [True, False])
@pytest.mark.parametrize("tile", [1, 4, 24])
@pytest.mark.parametrize("threads", [1, 2])
def test_energy_independent_of_symmetry_tile_threads(case, symmetry, tile, threads):
    mine = tilecc.CCSD(
        mean_field(case, symmetry), frozen=1, tile=tile, threads=threads, **TIGHT
    ).run()
    assert mine.converged
    assert mine.e_tot == pytest.approx(reference_energy(case), abs=1e-8)
