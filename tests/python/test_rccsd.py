"""Spin-adapted closed-shell CCSD against PySCF's RCCSD computed in the same test."""

from __future__ import annotations

import pytest
from pyscf import cc, gto, scf

import tilecc
from tilecc.cc import RCCSD
from tilecc.testing import symmetry_error

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-9}


def reference(mf, frozen):
    ref = cc.CCSD(mf, frozen=frozen)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    eris = ref.ao2mo()
    _, t1, t2 = ref.init_amps(eris)
    t1, t2 = ref.update_amps(t1, t2, eris)
    first = float(ref.energy(t1, t2, eris))
    return ref.run(), first


@pytest.mark.parametrize(
    ("atom", "basis", "frozen", "symmetry", "tile", "threads"),
    [
        (WATER, "6-31g", 1, True, 1, 1),
        (WATER, "6-31g", 1, True, 4, 2),
        (WATER, "6-31g", 1, False, 24, 2),
        ("N 0 0 0; N 0 0 1.0977", "cc-pvdz", 2, True, 8, 2),
    ],
)
def test_matches_pyscf(atom, basis, frozen, symmetry, tile, threads):
    mol = gto.M(atom=atom, basis=basis, symmetry=symmetry, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    ref, first = reference(mf, frozen)
    records = []
    mine = tilecc.CCSD(
        mf, frozen=frozen, tile=tile, threads=threads, callback=records.append, **TIGHT
    ).run()
    assert isinstance(mine, RCCSD) and mine.converged
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
    assert records[0].e_corr == pytest.approx(first, abs=1e-10)
    assert symmetry_error(mine.t2) < 1e-12


def test_every_plan_is_built_in_the_first_iteration():
    """The amplitudes an update makes have the shapes of those it read, so the iterations after
    the first reuse its plans and build none."""
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    solver = tilecc.CCSD(mf, tile=4, threads=1, max_cycle=4)
    built = []
    solver.callback = lambda _: built.append(solver.context.stats.plans_built)
    with pytest.warns(RuntimeWarning, match="did not converge"):
        solver.run()
    assert len(built) == 4 and built[0] > 0
    assert built == [built[0]] * 4


def test_open_shell_goes_spin_orbital():
    mol = gto.M(atom="O 0 0 0; H 0 0 0.97", basis="sto-3g", spin=1, verbose=0)
    mf = scf.UHF(mol).run()
    assert isinstance(tilecc.CCSD(mf), tilecc.cc.GCCSD)


def test_unverified_large_classes_give_the_same_energy(monkeypatch):
    """Classes above VERIFY_ELEMENTS are loaded without the dense check: same result."""
    from tilecc.host import pyscf as host

    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    checked = tilecc.CCSD(mf, tile=4, threads=1, **TIGHT).run()
    monkeypatch.setattr(host, "VERIFY_ELEMENTS", 0)
    unchecked = tilecc.CCSD(mf, tile=4, threads=1, **TIGHT).run()
    assert unchecked.e_tot == pytest.approx(checked.e_tot, abs=1e-10)


def test_iterations_hand_their_memory_on_and_give_it_back():
    """Each iteration's intermediates take the mappings the one before freed (tmp2, v^3 o without
    symmetry, is over the 128 KiB a store is mapped from), cleared: the energy still matches
    PySCF's. When the iterations end, the solver gives the mappings back to the kernel. The cache
    is the context's runtime's: another context's holds none of them."""
    mol = gto.M(atom="N 0 0 0; N 0 0 1.0977", basis="cc-pvdz", symmetry=False, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    ref, _ = reference(mf, 2)
    ctx, other = tilecc.Context(threads=1), tilecc.Context(threads=1)
    held, elsewhere = [], []

    def watch(_):
        held.append(ctx.runtime.mappings.held_bytes)
        elsewhere.append(other.runtime.mappings.held_bytes)

    mine = tilecc.CCSD(mf, frozen=2, tile=32, context=ctx, callback=watch, **TIGHT).run()
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
    assert min(held) > 0 and max(elsewhere) == 0
    assert ctx.runtime.mappings.held_bytes == 0
