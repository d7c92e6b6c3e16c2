"""Spin-orbital CCSD energies against PySCF's GCCSD computed in the same test."""

from __future__ import annotations

import numpy as np
import pytest
from pyscf import cc, gto, scf

import tilecc.cc
from tilecc.testing import symmetry_error

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-8}


def pyscf_gccsd(mf, frozen_spatial: int):
    ref = cc.GCCSD(scf.addons.convert_to_ghf(mf), frozen=2 * frozen_spatial)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    return ref.run()


def first_iteration_energy(mf, frozen_spatial: int) -> float:
    ref = cc.GCCSD(scf.addons.convert_to_ghf(mf), frozen=2 * frozen_spatial)
    eris = ref.ao2mo()
    _, t1, t2 = ref.init_amps(eris)
    t1, t2 = ref.update_amps(t1, t2, eris)
    return float(ref.energy(t1, t2, eris))


def mean_field(atom: str, basis: str, kind, symmetry: bool, charge: int = 0, spin: int = 0):
    mol = gto.M(atom=atom, basis=basis, symmetry=symmetry, charge=charge, spin=spin, verbose=0)
    return kind(mol).run(conv_tol=1e-12)


@pytest.mark.parametrize(
    ("symmetry", "tile", "threads"), [(True, 1, 1), (True, 4, 2), (False, 24, 2), (False, 4, 1)]
)
def test_water_rhf(symmetry, tile, threads):
    mf = mean_field(WATER, "6-31g", scf.RHF, symmetry)
    ref = pyscf_gccsd(mf, 1)
    records = []
    mine = tilecc.cc.GCCSD(
        mf, frozen=1, tile=tile, threads=threads, callback=records.append, **TIGHT
    ).run()
    assert mine.converged
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
    assert records[0].e_corr == pytest.approx(first_iteration_energy(mf, 1), abs=1e-10)
    assert symmetry_error(mine.t2) < 1e-12


@pytest.mark.parametrize(
    ("kind", "charge", "spin", "symmetry"),
    [(scf.UHF, 1, 1, True), (scf.ROHF, 1, 1, True), (scf.UHF, 0, 2, False)],
)
def test_open_shell(kind, charge, spin, symmetry):
    mf = mean_field(WATER, "6-31g", kind, symmetry, charge, spin)
    ref = pyscf_gccsd(mf, 1)
    mine = tilecc.cc.GCCSD(mf, frozen=1, tile=5, threads=2, **TIGHT).run()
    assert mine.converged
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)


@pytest.mark.parametrize("kind", [scf.UHF, scf.ROHF])
def test_integrals_gathered_block_by_block(monkeypatch, kind):
    """Every class loaded through from_blocks_ (no dense check): UHF reads three spin-pair
    transformations, ROHF (same alpha and beta orbitals) one shared."""
    from tilecc.host import pyscf as host

    monkeypatch.setattr(host, "VERIFY_ELEMENTS", 0)
    mf = mean_field(WATER, "6-31g", kind, True, 1, 1)
    mine = tilecc.cc.GCCSD(mf, frozen=1, tile=5, threads=2, **TIGHT).run()
    assert mine.e_tot == pytest.approx(pyscf_gccsd(mf, 1).e_tot, abs=1e-8)


def test_molecule_without_symmetry_all_electrons():
    mf = mean_field(
        "N 0 0 0; H 0.95 0.1 0; H -0.3 0.9 0.2; H -0.2 -0.4 0.85", "sto-3g", scf.RHF, False
    )
    ref = cc.GCCSD(scf.addons.convert_to_ghf(mf))
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    ref.run()
    mine = tilecc.cc.GCCSD(mf, frozen=0, tile=3, **TIGHT).run()
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)


def test_symmetry_skips_work():
    """With C2v the plans execute fewer flops than the same molecule in C1."""
    flops = {}
    for symmetry in (True, False):
        mf = mean_field(WATER, "6-31g", scf.RHF, symmetry)
        mine = tilecc.cc.GCCSD(mf, tile=4, threads=1, max_cycle=2, **TIGHT)
        with pytest.warns(RuntimeWarning, match="did not converge"):
            mine.run()
        flops[symmetry] = mine.context.stats.flops
        assert not mine.converged and np.isfinite(mine.e_corr)
    assert flops[True] < 0.6 * flops[False]


def test_bad_options():
    mf = mean_field("H 0 0 0; H 0 0 0.74", "sto-3g", scf.RHF, False)
    with pytest.raises(ValueError, match="tile must be a whole number"):
        tilecc.cc.GCCSD(mf, tile=0)
    with pytest.raises(ValueError, match="cannot freeze 3 orbitals"):
        tilecc.cc.GCCSD(mf, frozen=3).run()
    with pytest.raises(ValueError, match="every occupied orbital is frozen"):
        tilecc.cc.GCCSD(mf, frozen=1).run()
    unconverged = scf.RHF(mf.mol)
    with pytest.raises(ValueError, match="has not converged"):
        tilecc.cc.GCCSD(unconverged).run()


def test_n2_d2h_top_level_api_and_flops_saved():
    """N2/cc-pVDZ in D2h through tilecc.CCSD_T, against PySCF's RCCSD(T); the D2h run executes
    far fewer flops than the same molecule in C1."""
    import tilecc

    results = {}
    for symmetry in (True, False):
        mf = mean_field("N 0 0 0; N 0 0 1.0977", "cc-pvdz", scf.RHF, symmetry)
        mine = tilecc.CCSD_T(mf, frozen=2, tile=8, threads=2, **TIGHT).run()
        results[symmetry] = mine
    ref = cc.CCSD(mf, frozen=2)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    ref.run()
    e_t = ref.ccsd_t()
    for mine in results.values():
        assert mine.converged
        assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
        assert mine.e_tot_ccsd_t == pytest.approx(ref.e_tot + e_t, abs=1e-8)
    assert results[True].mf.mol.groupname == "Dooh"  # labelled through its D2h subgroup
    flops = {k: m.context.stats.flops / m.cycles for k, m in results.items()}
    assert flops[True] < 0.3 * flops[False]
