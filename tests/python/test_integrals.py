"""Pair-packed MO integrals read back block by block, and integral classes transformed in
batches into block tensors, against PySCF's unpacked transformation and dense einsum."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from pyscf import ao2mo, gto, scf

from tilecc import Context
from tilecc.host import integrals
from tilecc.host.integrals import PackedIntegrals, held_ao_bytes
from tilecc.host.pyscf import _SPATIAL_SYMMETRY, restricted_problem, spin_orbital_problem


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


def test_ao_integrals_are_held_only_where_they_fit_beside_the_rest(water):
    pairs = water.mol.nao * (water.mol.nao + 1) // 2
    need = 8 * (pairs * (pairs + 1) // 2)  # packed s8
    bare = without_ao_integrals(water)
    assert held_ao_bytes(bare, need + 100, beside=100) == need
    assert held_ao_bytes(bare, need + 100, beside=101) == 0
    assert held_ao_bytes(water, 10 * need, beside=0) == 0  # the mean field's own are used
    assert held_ao_bytes(bare.density_fit(), 10 * need, beside=0) == 0  # density-fitted instead


# -- integral classes transformed in batches ---------------------------------------------------


@pytest.fixture(scope="module")
def water_cation():
    mol = gto.M(
        atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692",
        basis="6-31g",
        charge=1,
        spin=1,
        symmetry=True,
        verbose=0,
    )
    return scf.UHF(mol).run()


def without_ao_integrals(mf):
    """The mean field as one whose AO integrals did not fit in its memory (PySCF's _eri None)."""
    bare = copy.copy(mf)
    bare._eri = None
    return bare


#: Where the batches' AO integrals come from: the mean field's, held for the batches, or
#: computed again by PySCF for each batch.
AO_SOURCES = ["mean field", "held", "per batch"]


def spy_on_transformations(
    mf, monkeypatch, max_elements: int | None, source: str
) -> tuple[object, list[list[int]]]:
    """The mean field to use for AO integrals from `source`; record the orbital counts of every
    transformation; cap the batches at max_elements."""
    calls: list[list[int]] = []
    real = integrals.transform

    def transform(mf, coefficients, ao=None):
        assert (ao is not None) == (source == "held")
        calls.append([c.shape[1] for c in coefficients])
        return real(mf, coefficients, ao)

    monkeypatch.setattr(integrals, "transform", transform)
    if max_elements is not None:
        monkeypatch.setattr(integrals, "DEFAULT_BATCH_ELEMENTS", max_elements)
    if source in ("per batch", "file"):
        monkeypatch.setattr(integrals, "available_memory", lambda: 0)
    # Without held AO integrals, several batches take the file instead (transformed_file).
    monkeypatch.setenv("TILECC_INTEGRALS", "auto" if source == "file" else "batches")
    return (mf if source == "mean field" else without_ao_integrals(mf)), calls


@pytest.mark.parametrize("source", [*AO_SOURCES, "file"])
@pytest.mark.parametrize("max_elements", [None, 1])
def test_restricted_classes_in_batches_match_the_whole_transformation(
    symmetric_water, monkeypatch, max_elements, source
):
    """One batch of everything, or (max_elements=1) one batch per first-index tile, with the
    AO integrals from each source: the same integrals as PySCF's transformation of each class
    as a whole. Without AO integrals held and in several batches, the integrals are transformed
    once into a file and read back (no batch is transformed), the same again."""
    bare, calls = spy_on_transformations(symmetric_water, monkeypatch, max_elements, source)
    mf = symmetric_water
    problem = restricted_problem(
        bare, frozen=1, tile=2, context=Context(threads=1), classes=tuple(_SPATIAL_SYMMETRY)
    )
    nocc = int(np.count_nonzero(mf.mo_occ))
    natural = {"o": np.arange(1, nocc), "v": np.arange(nocc, mf.mo_coeff.shape[1])}
    coeff = {
        x: mf.mo_coeff[:, natural[x][np.array(space.order)]]
        for x, space in (("o", problem.occ), ("v", problem.vir))
    }
    for name, t in problem.eri.items():
        chosen = tuple(coeff[x] for x in name)
        expected = ao2mo.incore.general(mf._eri, chosen, compact=False).reshape(t.shape)
        assert np.allclose(t.to_dense(), expected, atol=1e-10), name
    first_tiles = len(problem.occ.tiles) + len(problem.vir.tiles)
    if source == "file" and max_elements is not None:
        assert calls == []
    else:
        assert len(calls) == (1 if max_elements is None else first_tiles)


@pytest.mark.parametrize("source", AO_SOURCES)
@pytest.mark.parametrize("max_elements", [None, 1])
def test_spin_orbital_classes_in_batches_match_the_dense_antisymmetrized_integrals(
    water_cation, monkeypatch, max_elements, source
):
    mf = water_cation
    bare, _ = spy_on_transformations(mf, monkeypatch, max_elements, source)
    problem = spin_orbital_problem(bare, tile=3, context=Context(threads=1))
    occupied = [np.flatnonzero(occ > 0) for occ in mf.mo_occ]
    virtual = [np.flatnonzero(occ == 0) for occ in mf.mo_occ]
    # Spin orbitals in natural order: alpha occupied, beta occupied, alpha virtual, beta virtual.
    columns = [mf.mo_coeff[s][:, p] for group in (occupied, virtual) for s, p in enumerate(group)]
    spins = [np.full(len(p), s) for group in (occupied, virtual) for s, p in enumerate(group)]
    c, spin = np.hstack(columns), np.concatenate(spins)
    eri = ao2mo.restore(1, mf._eri, mf.mol.nao)
    coulomb = np.einsum("mnls,mp,nq,lr,st->pqrt", eri, c, c, c, c, optimize=True)
    coulomb *= (spin[:, None] == spin[None, :])[:, :, None, None]
    coulomb *= (spin[:, None] == spin[None, :])[None, None, :, :]
    physicists = coulomb.transpose(0, 2, 1, 3) - coulomb.transpose(0, 2, 3, 1)
    nocc = problem.occ.size
    order = {"o": np.array(problem.occ.order), "v": nocc + np.array(problem.vir.order)}
    for name, t in problem.eri.items():
        expected = physicists[np.ix_(*(order[x] for x in name))]
        assert np.allclose(t.to_dense(), expected, atol=1e-10), name


def test_a_bad_integrals_choice_is_one_sentence(symmetric_water, monkeypatch):
    monkeypatch.setenv("TILECC_INTEGRALS", "disk")
    with pytest.raises(ValueError, match="set it to 'auto', 'batches' or 'file'"):
        restricted_problem(symmetric_water, frozen=1, tile=2, context=Context(threads=1))


def test_an_unwritable_scratch_for_the_integrals_file_is_one_sentence(
    symmetric_water, monkeypatch, tmp_path
):
    # A scratch path under a regular file can hold no directory: one sentence naming the remedy
    # and the space the file needs, and nothing left behind.
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("TILECC_INTEGRALS", "file")
    monkeypatch.setenv("TILECC_SCRATCH", str(blocker / "scratch"))
    with pytest.raises(ValueError, match=r"give --scratch a writable directory with .* GB free"):
        restricted_problem(symmetric_water, frozen=1, tile=2, context=Context(threads=1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
