"""The block-store protocol from Python: CC energies and contractions are the same through the
test store that copies every block a task reads or writes as through the zero-copy memory store,
and the transfers each store counts are of its own class."""

from __future__ import annotations

import numpy as np
import pytest
from pyscf import gto, scf

import tilecc
from tilecc import Space, Tensor

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-9}


@pytest.mark.parametrize(("kind", "charge", "spin"), [(scf.RHF, 0, 0), (scf.UHF, 1, 1)])
def test_cc_energies_are_the_same_through_a_store_that_copies(kind, charge, spin):
    mol = gto.M(atom=WATER, basis="6-31g", charge=charge, spin=spin, symmetry=True, verbose=0)
    mf = kind(mol).run(conv_tol=1e-12)
    energies = {}
    for store in ("memory", "copy"):
        cc = tilecc.CCSD(mf, frozen=1, tile=3, threads=2, store=store, **TIGHT).run()
        energies[store] = (cc.e_tot, cc.ccsd_t())
        assert cc.t2 is not None and cc.t2._core.store_kind == store
    assert energies["copy"][0] == pytest.approx(energies["memory"][0], abs=1e-10)
    assert energies["copy"][1] == pytest.approx(energies["memory"][1], abs=1e-10)


@pytest.mark.parametrize(
    ("out", "a", "b"),
    [
        ("ijab", "ijcd", "abcd"),
        ("ijab", "ikac", "kbcj"),
        ("ia", "ijab", "jb"),
        ("ab", "ijac", "ijcb"),
    ],
)
def test_contractions_are_the_same_and_counted_by_class(out, a, b):
    results, counts = {}, {}
    for store in ("memory", "copy"):
        ctx = tilecc.Context(threads=2, store=store)
        o = Space.spin_orbitals([0, 1, 0, 1, 1], tile=2, kind="occupied", name="o")
        v = Space.spin_orbitals([0, 1, 1, 0, 0, 1, 0, 1], tile=3, kind="virtual", name="v")
        spaces = {"o": o, "v": v}

        ta, tb, tc = (
            Tensor([spaces["o" if c >= "i" else "v"] for c in labels], name=name, context=ctx)
            for labels, name in ((a, "A"), (b, "B"), (out, "C"))
        )
        ta.fill_random_(1)
        tb.fill_random_(2)
        for t in (ta, tb, tc):
            t.reset_transfers()
        tc[out] = 0.5 * ta[a] * tb[b]
        results[store] = tc.to_dense()
        counts[store] = (ta.transfers(), tc.transfers())
    np.testing.assert_array_equal(results["copy"], results["memory"])
    for side in (0, 1):
        memory, copy = counts["memory"][side], counts["copy"][side]
        assert memory["view"] == copy["copy"] and memory["view"][1] > 0
        assert memory["copy"] == copy["view"] == (0, 0)


def test_an_unknown_store_lists_the_registered_ones():
    with pytest.raises(
        ValueError, match="unknown block store 'tape'; valid ones are: copy, disk, memory"
    ):
        tilecc.Context(threads=1, store="tape")
