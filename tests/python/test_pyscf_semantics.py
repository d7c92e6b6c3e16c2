"""The Python API means what PySCF means: ``frozen`` (None, n, a list, a pair of lists), ``e_tot``
without (T), and ROHF-(T) only on semicanonical orbitals. References are PySCF's CC classes
computed in the test."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from pyscf import cc, gto, scf

import tilecc
from tilecc.host.pyscf import semicanonical_orbitals

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-9}


@functools.cache
def mean_field(kind, charge: int = 0, spin: int = 0, symmetry: bool = True):
    mol = gto.M(atom=WATER, basis="6-31g", charge=charge, spin=spin, symmetry=symmetry, verbose=0)
    return kind(mol).run(conv_tol=1e-12)


def pyscf_energy(mf, frozen) -> float:
    ref = cc.CCSD(mf, frozen=frozen)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    return float(ref.run().e_tot)


@pytest.mark.parametrize("frozen", [None, 0, 1, [0, 12]])
def test_restricted_frozen_as_pyscf(frozen):
    """None and 0 correlate every electron (PySCF's default); a list may freeze a virtual."""
    mf = mean_field(scf.RHF)
    mine = tilecc.CCSD(mf, frozen=frozen, tile=4, threads=1, **TIGHT).run()
    assert mine.e_tot == pytest.approx(pyscf_energy(mf, frozen), abs=1e-8)


@pytest.mark.parametrize("frozen", [None, 1, [[0], [0, 1]]])
def test_unrestricted_frozen_as_pyscf(frozen):
    """A pair of lists freezes each spin's own orbitals, as PySCF's UCCSD does."""
    mf = mean_field(scf.UHF, 1, 1)
    mine = tilecc.CCSD(mf, frozen=frozen, tile=4, threads=2, **TIGHT).run()
    assert mine.e_tot == pytest.approx(pyscf_energy(mf, frozen), abs=1e-8)


@pytest.mark.parametrize(
    ("frozen", "message"),
    [
        (2.5, "frozen must be a whole number"),
        ([0, 99], "cannot freeze orbital 99"),
        ("core", "frozen must be None, a number of orbitals or a list"),
        ([[0], [0]], "a pair of frozen lists is for unrestricted references"),
    ],
)
def test_bad_frozen_refused(frozen, message):
    with pytest.raises(ValueError, match=message):
        tilecc.CCSD(mean_field(scf.RHF), frozen=frozen).run()


def test_e_tot_stays_ccsd_after_ccsd_t():
    """PySCF's idiom ``e_tot + ccsd_t()`` counts (T) once."""
    mf = mean_field(scf.RHF)
    mine = tilecc.CCSD(mf, tile=4, threads=1, **TIGHT).run()
    before = mine.e_tot
    assert mine.e_tot_ccsd_t is None
    e_t = mine.ccsd_t()
    assert mine.e_tot == before
    ref = cc.CCSD(mf)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    ref.run()
    assert mine.e_tot + e_t == pytest.approx(ref.e_tot + ref.ccsd_t(), abs=1e-8)
    assert mine.e_tot_ccsd_t == pytest.approx(before + e_t, abs=1e-14)


def test_semicanonical_orbitals_diagonalise_each_spin_block():
    mf = mean_field(scf.ROHF, 1, 1)
    umf = scf.addons.convert_to_uhf(mf)
    fock = umf.get_fock(dm=umf.make_rdm1())
    coeffs, energies = semicanonical_orbitals(mf.mol, list(umf.mo_coeff), list(fock), umf.mo_occ)
    for c, f, e, occupation in zip(coeffs, fock, energies, umf.mo_occ, strict=True):
        mo_fock = c.T @ f @ c
        occ = occupation > 0.5
        for block in (np.ix_(occ, occ), np.ix_(~occ, ~occ)):
            assert np.abs(mo_fock[block] - np.diag(np.diag(mo_fock[block]))).max() < 1e-10
        assert np.allclose(np.diag(mo_fock), e, atol=1e-12)
        # Orthonormal, and spanning the same occupied space as the ROHF orbitals.
        s = mf.mol.intor("int1e_ovlp")
        assert np.allclose(c.T @ s @ c, np.eye(c.shape[1]), atol=1e-10)


def test_semicanonical_ccsd_equals_rohf_ccsd_without_frozen_orbitals():
    """All-electron CCSD is invariant to occupied-occupied and virtual-virtual rotations, so the
    semicanonical orbitals give the ROHF-CCSD energy; with frozen orbitals they do not (Psi4's
    cc8 and cc8b differ the same way)."""
    mf = mean_field(scf.ROHF, 1, 1)
    plain = tilecc.CCSD(mf, frozen=0, tile=5, threads=2, **TIGHT).run()
    semi = tilecc.CCSD(mf, frozen=0, semicanonical=True, tile=5, threads=2, **TIGHT).run()
    assert semi.e_tot == pytest.approx(plain.e_tot, abs=1e-9)
    assert semi.problem.semicanonical and not plain.problem.semicanonical


def test_rohf_triples_needs_semicanonical_orbitals():
    mf = mean_field(scf.ROHF, 1, 1)
    plain = tilecc.CCSD(mf, tile=5, threads=2).run()
    with pytest.raises(ValueError, match="ROHF-\\(T\\) is defined on semicanonical orbitals"):
        plain.ccsd_t()
    assert tilecc.CCSD_T(mf, tile=5, threads=2).run().problem.semicanonical


@pytest.mark.parametrize(("kind", "charge", "spin"), [(scf.RHF, 0, 0), (scf.UHF, 1, 1)])
def test_density_fitted_mean_field_gets_density_fitted_integrals(kind, charge, spin):
    """PySCF's CCSD(mf) of a DF mean field is DF-CCSD (every integral class fitted); exact
    integrals would differ by ~1e-5 Eh."""
    mol = gto.M(atom=WATER, basis="6-31g", charge=charge, spin=spin, symmetry=True, verbose=0)
    mf = kind(mol).density_fit().run(conv_tol=1e-12)
    mine = tilecc.CCSD(mf, tile=4, threads=2, **TIGHT).run()
    assert mine.e_tot == pytest.approx(pyscf_energy(mf, None), abs=1e-8)
