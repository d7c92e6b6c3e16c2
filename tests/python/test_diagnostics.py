"""A run's diagnostics against PySCF's, computed in the test: the T1 and D1 diagnostics of a
closed shell (the same T1 through the spin-orbital solver), the largest T2 amplitude and where
it is, and an open-shell reference's <S^2>."""

from __future__ import annotations

import numpy as np
import pytest
from pyscf import cc, gto, scf

import tilecc
from tilecc.cc.diagnostics import diagnostics, lines

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-9}


@pytest.fixture(scope="module")
def closed_shell():
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    reference = cc.CCSD(mf).run(**TIGHT)
    ours = tilecc.CCSD(mf, threads=1, **TIGHT).run()
    return mf, reference, ours


def test_t1_and_d1_are_pyscfs(closed_shell):
    mf, reference, ours = closed_shell
    found = diagnostics(ours.t1, ours.t2, mf)
    assert found.t1 == pytest.approx(reference.get_t1_diagnostic(), abs=1e-8)
    assert found.d1 == pytest.approx(reference.get_d1_diagnostic(), abs=1e-8)
    assert found.s2 is None
    # The spin-orbital form of the same closed shell has the same T1 (and no D1).
    spin_orbital = tilecc.cc.GCCSD(mf, threads=1, **TIGHT).run()
    through_spin_orbitals = diagnostics(spin_orbital.t1, spin_orbital.t2, mf)
    assert through_spin_orbitals.t1 == pytest.approx(found.t1, abs=1e-8)
    assert through_spin_orbitals.d1 is None


def test_the_largest_t2_amplitude_is_pyscfs(closed_shell):
    mf, reference, ours = closed_shell
    found = diagnostics(ours.t1, ours.t2, mf)
    i, j, a, b, value = found.largest_t2[0]
    t2 = reference.t2
    assert abs(value) == pytest.approx(np.abs(t2).max(), abs=1e-8)
    # PySCF numbers orbitals in energy order from 0; the same amplitude sits at (i, j, a, b).
    assert t2[int(i) - 1, int(j) - 1, int(a) - 1, int(b) - 1] == pytest.approx(value, abs=1e-8)
    # Each distinct amplitude once, largest first.
    sizes = [abs(x) for *_, x in found.largest_t2]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert lines(found)[0].startswith("T1 diagnostic = ")


def test_an_open_shell_reference_reports_its_spin_contamination():
    mol = gto.M(atom=WATER, basis="6-31g", charge=1, spin=1, symmetry=True, verbose=0)
    mf = scf.UHF(mol).run(conv_tol=1e-12)
    ours = tilecc.CCSD(mf, threads=1).run()
    found = diagnostics(ours.t1, ours.t2, mf)
    assert found.s2 == pytest.approx(mf.spin_square()[0], abs=1e-10)
    assert found.s2_exact == pytest.approx(0.75)
    assert found.d1 is None and found.largest_t2[0][0].endswith(("α", "β"))
