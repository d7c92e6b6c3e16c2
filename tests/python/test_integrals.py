"""Pair-packed MO integrals read back block by block, against PySCF's unpacked transformation."""

from __future__ import annotations

import numpy as np
import pytest
from pyscf import ao2mo, gto, scf

from tilecc.host.integrals import PackedIntegrals


@pytest.fixture(scope="module")
def water():
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="6-31g")
    return scf.RHF(mol).run(verbose=0)


@pytest.mark.parametrize("classes", ["oooo", "ovov", "oovv", "ovvv", "vvvv"])
@pytest.mark.parametrize("incore", [True, False])
def test_blocks_match_the_unpacked_transformation(water, classes, incore):
    c = water.mo_coeff
    coeff = {"o": c[:, 1:5], "v": c[:, 5:]}
    # Without _eri (a mean field never run) PySCF transforms out of core.
    mf = water if incore else scf.RHF(water.mol)
    chosen = tuple(coeff[x] for x in classes)
    expected = ao2mo.incore.general(water._eri, chosen, compact=False)
    expected = expected.reshape([x.shape[1] for x in chosen])
    packed = PackedIntegrals(mf, chosen)
    rng = np.random.default_rng(7)
    index = [rng.permutation(x.shape[1])[: max(1, x.shape[1] - 2)] for x in chosen]
    assert np.allclose(packed.block(*index), expected[np.ix_(*index)], atol=1e-12)


def test_one_shared_transformation_of_all_active_orbitals(water):
    active = water.mo_coeff[:, 1:]
    packed = PackedIntegrals(water, (active, active, active, active))
    assert packed.rows.packed and packed.cols.packed
    every = np.arange(active.shape[1])
    expected = ao2mo.incore.general(water._eri, (active,) * 4, compact=False)
    assert np.allclose(packed.block(every, every, every, every).reshape(expected.shape), expected)
