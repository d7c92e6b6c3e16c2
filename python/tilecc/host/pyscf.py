"""PySCF adapter: a converged mean-field object -> spin-orbital spaces, Fock and antisymmetrized
integral tensors for coupled-cluster methods.

Every reference (RHF, UHF, ROHF) is treated through its UHF form: alpha and beta orbitals, their
Fock matrices built from the reference density (so ROHF's non-canonical Fock terms are kept), and
<pq||rs> = <pq|rs> - <pq|sr> over spin orbitals. Orbitals carry PySCF's irrep ids (D2h subgroups,
products by XOR), so tilecc stores and computes only symmetry-allowed blocks.

Integral notation: physicists', antisymmetrized, <pq||rs> = (pr|qs) - (ps|qr) in terms of
chemists' spatial integrals with matching spins.

Each integral class is transformed in batches of its stored blocks, over just the orbitals a
batch touches, and written into its tensor block by block (host/integrals.py): no array over all
orbitals, or over a whole integral class, is built, except to check the irrep labels of small
classes; on several ranks each transforms a share of the batches.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc import mpi
from tilecc.context import Context, default_context
from tilecc.host.integrals import (
    IntegralClass,
    PackedIntegrals,
    Reader,
    Subset,
    ao_integrals,
    batch_count,
    batch_elements,
    held_ao_bytes,
    load_in_batches,
)
from tilecc.host.transformed_file import (
    file_bytes,
    fits_on_disk,
    load_from_file,
    transformed_file,
)
from tilecc.log import LOGGER
from tilecc.space import Space
from tilecc.symmetry import antisymmetric, antisymmetric_pairs, bra_ket_swap, symmetric
from tilecc.tensor import Tensor

#: Index symmetry of each antisymmetrized integral class, as generators over its 4 indices.
_INTEGRAL_SYMMETRY = {
    "oooo": antisymmetric_pairs(),
    "ooov": [antisymmetric(4, 0, 1)],
    "oovv": antisymmetric_pairs(),
    "ovov": [],
    "ovvv": [antisymmetric(4, 2, 3)],
    "vvvv": antisymmetric_pairs(),
}


@dataclass
class SpinOrbitalProblem:
    """What a spin-orbital CC method needs: spaces, Fock blocks, integrals, reference energy."""

    occ: Space
    vir: Space
    fock: dict[str, Tensor]  # "oo", "ov", "vv"
    eri: dict[str, Tensor]  # "oooo", "ooov", "oovv", "ovov", "ovvv", "vvvv": <pq||rs>
    e_hf: float
    frozen: FrozenOrbitals
    reference: str
    #: Whether the orbitals were rotated to ROHF's semicanonical ones (see semicanonical_orbitals).
    semicanonical: bool = False


#: Integral classes up to this size are verified against their tensor's symmetry and sparsity
#: when loaded (which checks the orbitals' irrep labels); larger ones are loaded unchecked. The
#: check holds several dense copies of the class, so it is kept to small classes: those over the
#: same orbitals check the labels the large ones use.
VERIFY_ELEMENTS = 1 << 20

#: Index symmetry of each chemists' integral class over real spatial orbitals.
_SPATIAL_SYMMETRY = {
    "ovov": [bra_ket_swap()],
    "oovv": [symmetric(4, 0, 1), symmetric(4, 2, 3)],
    "ovoo": [symmetric(4, 2, 3)],
    "oooo": [symmetric(4, 0, 1), symmetric(4, 2, 3), bra_ket_swap()],
    "ovvv": [symmetric(4, 2, 3)],
    "vvvv": [symmetric(4, 0, 1), symmetric(4, 2, 3), bra_ket_swap()],
}


@dataclass
class RestrictedProblem:
    """Closed-shell spatial-orbital problem: spaces, Fock blocks and chemists' integrals (pq|rs)
    of the classes asked for."""

    occ: Space
    vir: Space
    eri: dict[str, Tensor]
    fock: dict[str, Tensor]
    e_hf: float
    frozen: FrozenOrbitals

    @property
    def ovov(self) -> Tensor:
        return self.eri["ovov"]


def restricted_problem(
    mf: Any,
    *,
    frozen: Any = None,
    tile: int = 16,
    context: Context | None = None,
    classes: tuple[str, ...] = ("ovov",),
) -> RestrictedProblem:
    """Spatial-orbital Fock blocks and integral classes of a converged closed-shell RHF
    reference, each class built from its own MO integral block (never all orbitals at once)."""

    if _reference(mf) != "rhf":
        raise ValueError("this method needs a closed-shell RHF reference; use RHF for 2S = 0.")
    if not getattr(mf, "converged", False):
        raise ValueError("the mean-field calculation has not converged; converge it first.")
    ctx = context if context is not None else default_context()
    mol = mf.mol
    frozen_set = frozen_orbitals(frozen, [mf.mo_occ])[0]
    occ_idx, vir_idx = active_orbitals(mf.mo_occ, frozen_set)
    orbsym = orbital_irreps(mol, mf.mo_coeff)
    e = mf.mo_energy
    occ = Space(
        [int(orbsym[p]) for p in occ_idx], energies=e[occ_idx], tile=tile, kind="occupied", name="o"
    )
    vir = Space(
        [int(orbsym[p]) for p in vir_idx], energies=e[vir_idx], tile=tile, kind="virtual", name="v"
    )
    order = {"o": np.array(occ.order), "v": np.array(vir.order)}
    # Coefficient columns already in each space's sorted order, so sorted positions index them.
    coeff = {"o": mf.mo_coeff[:, occ_idx[order["o"]]], "v": mf.mo_coeff[:, vir_idx[order["v"]]]}
    spaces = {"o": occ, "v": vir}
    # One numbering of the active orbitals (occupied, then virtual, each in sorted order) for
    # every class, so that a batch's transformation serves them all.
    active = np.hstack([coeff["o"], coeff["v"]])
    start = {"o": 0, "v": occ.size}
    eri = {
        name: Tensor(
            [spaces[x] for x in name], _SPATIAL_SYMMETRY[name], name=f"({name})", context=ctx
        )
        for name in classes
    }
    held, ao = _ao_integrals(mf, ctx, eri.values())
    loaded = [
        IntegralClass(t, [start[x] + np.arange(spaces[x].size) for x in name])
        for name, t in eri.items()
    ]
    if _transform_once(mf, ctx, loaded, held, active.shape[1]):
        # What a plan counts too: the file on the scratch disk, PySCF's buffers in memory.
        ctx.integral_file_bytes = file_bytes(active.shape[1])
        buffers = 8 * batch_elements(ctx.memory_budget)
        ctx.largest_transform_bytes = max(ctx.largest_transform_bytes, buffers)
        if not ctx.planning:
            LOGGER.info(
                f"integrals: transformed once into a file of "
                f"{ctx.integral_file_bytes / 1e9:.1f} GB under "
                f"{_scratch(ctx) or tempfile.gettempdir()} (the AO integrals do not fit in "
                f"memory beside the tensors)"
            )
            with transformed_file(mf, active, _scratch(ctx), buffers) as f:
                load_from_file(loaded, f)
    else:
        load_in_batches(
            loaded,
            lambda subsets: _spatial_reader(mf, active, subsets, ao),
            mol.nao,
            batch_elements(ctx.memory_budget),
            VERIFY_ELEMENTS,
            held,
        )
    fock_mo = mf.mo_coeff.T @ mf.get_fock() @ mf.mo_coeff
    natural = {"o": occ_idx, "v": vir_idx}
    fock = {}
    for name in ("oo", "ov", "vv"):
        t = Tensor([spaces[x] for x in name], name=f"f{name}", context=ctx)
        rows, cols = (natural[x][order[x]] for x in name)
        t.from_dense_(fock_mo[np.ix_(rows, cols)], atol=1e-9)
        fock[name] = t
    return RestrictedProblem(occ, vir, eri, fock, float(mf.e_tot), (frozen_set, frozen_set))


def _scratch(ctx: Context) -> str | None:
    return ctx.scratch or os.environ.get("TILECC_SCRATCH") or None


def _transform_once(
    mf: Any, ctx: Context, classes: list[IntegralClass], held: int, n_active: int
) -> bool:
    """Whether to transform the integrals once into a file (tilecc.host.transformed_file)
    rather than batch by batch: when each batch would compute every AO integral again (none are
    held, the mean field keeps none, more than one batch) in one process, and the file fits on
    the scratch disk. TILECC_INTEGRALS=batches or file decides instead. A plan decides alike
    (and transforms nothing)."""
    choice = os.environ.get("TILECC_INTEGRALS", "auto") or "auto"
    if choice not in ("auto", "batches", "file"):
        raise ValueError(f"TILECC_INTEGRALS is {choice!r}; set it to 'auto', 'batches' or 'file'.")
    if mpi.world().size > 1 or choice == "batches":
        return False
    if choice == "file":
        return True
    if held or getattr(mf, "_eri", None) is not None or getattr(mf, "with_df", None) is not None:
        return False
    many = batch_count(classes, mf.mol.nao, batch_elements(ctx.memory_budget)) > 1
    return many and fits_on_disk(_scratch(ctx), n_active)


def _ao_integrals(
    mf: Any, ctx: Context, tensors: Iterable[Tensor]
) -> tuple[int, np.ndarray | None]:
    """The bytes of AO integrals the batches hold beside these integral tensors and one batch
    (see integrals.held_ao_bytes), and those integrals (None when none are held, or when
    planning: a plan transforms nothing)."""
    beside = sum(8 * t.stored_elements for t in tensors) + 8 * batch_elements(ctx.memory_budget)
    held = held_ao_bytes(mf, ctx.memory_budget, beside)
    return held, ao_integrals(mf) if held and not ctx.planning else None


def _spatial_reader(
    mf: Any, active: np.ndarray, subsets: tuple[Subset, ...], ao: np.ndarray | None
) -> Reader:
    """(pq|rs) over the active orbitals of each subset (the columns of ``active``)."""
    coefficients = [active[:, subset.positions] for subset in subsets]
    for first, second in ((0, 1), (2, 3)):
        if subsets[first].same(subsets[second]):
            coefficients[second] = coefficients[first]  # one set: PySCF packs the pair
    integrals = PackedIntegrals(mf, coefficients, ao)

    def read(p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        return integrals.block(*(sub.local(x) for sub, x in zip(subsets, (p, q, r, s))))

    return read


def orbital_irreps(mol: Any, coeff: np.ndarray) -> np.ndarray:
    """Each orbital's irrep as a D2h-subgroup id (products by XOR); all 0 without symmetry.

    Linear molecules are labelled by PySCF in D(inf)h / C(inf)v with ids whose last decimal digit
    is the irrep of the D2h / C2v subgroup, which is what block sparsity needs.
    """
    from pyscf import scf

    if not mol.symmetry:
        return np.zeros(coeff.shape[1], dtype=int)
    return np.asarray(scf.hf_symm.get_orbsym(mol, coeff)) % 10


def chemical_core(mol: Any) -> int:
    """The chemical core's orbital count (what ``--frozen-core`` freezes): PySCF's count, which
    leaves out the electrons an effective core potential already replaces."""
    from pyscf.data import elements

    return int(elements.chemcore(mol))


#: The orbitals left uncorrelated, as sorted MO indices per spin (alpha, beta); the same tuple
#: twice for restricted references.
FrozenOrbitals = tuple[tuple[int, ...], tuple[int, ...]]


def frozen_orbitals(frozen: Any, occupations: list[np.ndarray]) -> FrozenOrbitals:
    """PySCF's ``frozen`` for each spin's MOs: None or 0 correlates every orbital; an int n
    freezes the n lowest; a list freezes those MO indices (for both spins); a pair of lists
    (unrestricted references) freezes each spin's own. ``occupations`` holds each spin's
    occupation numbers (one array for restricted references).

    >>> import numpy as np
    >>> occ = [np.array([1.0, 1, 1, 0, 0])]
    >>> frozen_orbitals(None, occ), frozen_orbitals(2, occ), frozen_orbitals([0, 4], occ)
    (((), ()), ((0, 1), (0, 1)), ((0, 4), (0, 4)))
    """
    nmo = [len(o) for o in occupations]

    def listed(value: Any, spin: int) -> tuple[int, ...]:
        try:
            indices = sorted({_whole(i, "frozen orbital index") for i in value})
        except TypeError:
            raise ValueError(
                f"frozen must be None, a number of orbitals or a list of MO indices, got {value!r}."
            ) from None
        bad = [i for i in indices if not 0 <= i < nmo[spin]]
        if bad:
            raise ValueError(
                f"cannot freeze orbital {bad[0]}: the reference has MOs 0 to {nmo[spin] - 1}."
            )
        return tuple(indices)

    if frozen is None:
        count = 0
    elif isinstance(frozen, (list, tuple, np.ndarray)):
        items = list(frozen)
        if len(items) == 2 and all(isinstance(x, (list, tuple, np.ndarray)) for x in items):
            if len(occupations) == 1:
                raise ValueError(
                    "a pair of frozen lists is for unrestricted references; give one list of "
                    "MO indices for a restricted one."
                )
            return listed(items[0], 0), listed(items[1], 1)
        one = listed(items, 0)
        if len(occupations) == 2:
            listed(items, 1)
        return one, one
    elif isinstance(frozen, (int, np.integer, float)) and not isinstance(frozen, bool):
        count = _whole(frozen, "frozen")
    else:
        raise ValueError(
            f"frozen must be None, a number of orbitals or a list of MO indices, got {frozen!r}."
        )
    if count < 0 or any(count > n for n in nmo):
        raise ValueError(
            f"cannot freeze {count} orbitals: the reference has {min(nmo)} MOs; freeze "
            f"between 0 and {min(nmo)}."
        )
    lowest = tuple(range(count))
    return lowest, lowest


def _whole(value: Any, what: str) -> int:
    """``value`` as an int, refusing floats, bools and strings (PySCF's frozen is integers)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be a whole number, got {value!r}.")
    return int(value)


def active_orbitals(occupation: np.ndarray, frozen: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The correlated occupied and virtual MO indices of one spin."""
    keep = np.ones(len(occupation), dtype=bool)
    keep[list(frozen)] = False
    occupied = occupation > 0.5
    occ, vir = np.flatnonzero(keep & occupied), np.flatnonzero(keep & ~occupied)
    if len(occ) == 0:
        raise ValueError(
            "every occupied orbital is frozen, so there is nothing to correlate; freeze fewer."
        )
    if len(vir) == 0:
        raise ValueError(
            "the molecule has no virtual orbitals in this basis (or all are frozen), so there "
            "is nothing to correlate; use a larger basis set."
        )
    return occ, vir


def semicanonical_orbitals(
    mol: Any, coeffs: list[np.ndarray], fock_ao: list[np.ndarray], occupations: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """ROHF's semicanonical orbitals: each spin's occupied and virtual orbitals rotated among
    themselves (within each irrep, so that symmetry labels stay exact) until that spin's Fock
    matrix is diagonal in the occupied-occupied and virtual-virtual blocks, then ordered by
    energy within each block. The standard ROHF-CCSD(T) (Psi4, CFOUR, MRCC, NWChem) runs on these
    orbitals; they leave the ROHF energy and the CCSD energy without frozen orbitals unchanged.
    Returns the coefficients and the orbital energies (Fock diagonals) of each spin."""
    out_coeffs, out_energies = [], []
    for c, f_ao, occupation in zip(coeffs, fock_ao, occupations, strict=True):
        fock = c.T @ f_ao @ c
        irreps = orbital_irreps(mol, c)
        rotated = c.copy()
        energies = np.empty(c.shape[1])
        for occupied in (occupation > 0.5, occupation <= 0.5):
            for irrep in np.unique(irreps[occupied]):
                members = np.flatnonzero(occupied & (irreps == irrep))
                values, vectors = np.linalg.eigh(fock[np.ix_(members, members)])
                rotated[:, members] = c[:, members] @ vectors
                energies[members] = values
        order = np.concatenate(
            [
                np.flatnonzero(occupation > 0.5)[np.argsort(energies[occupation > 0.5])],
                np.flatnonzero(occupation <= 0.5)[np.argsort(energies[occupation <= 0.5])],
            ]
        )
        out_coeffs.append(rotated[:, order])
        out_energies.append(energies[order])
    return out_coeffs, out_energies


def _reference(mf: Any) -> str:
    from pyscf import scf

    if isinstance(mf, scf.uhf.UHF):
        return "uhf"
    if isinstance(mf, scf.rohf.ROHF):
        return "rohf"
    if isinstance(mf, scf.hf.RHF):
        return "rhf"
    raise ValueError(f"tilecc needs an RHF, UHF or ROHF reference, got {type(mf).__name__}.")


class _SpinCoulomb:
    """(pq|rs) over spin orbitals, from spatial MO integrals of each spin combination, each over
    just the spin orbitals that one subset per index holds (natural spin-orbital indices), so
    that no array over all spin orbitals is ever built."""

    def __init__(
        self,
        mf: Any,
        coefficients: list[np.ndarray],
        spin: np.ndarray,
        spatial: np.ndarray,
        subsets: tuple[Subset, ...],
        ao: np.ndarray | None,
    ) -> None:
        self.spin = spin
        self.sources: dict[tuple[int, int], tuple[PackedIntegrals, list[Subset]]] = {}
        for s1, s2 in itertools.product((0, 1), repeat=2):
            members = [
                Subset(subset.positions[spin[subset.positions] == sigma])
                for subset, sigma in zip(subsets, (s1, s1, s2, s2))
            ]
            if any(len(m.positions) == 0 for m in members):
                continue
            sets = [
                coefficients[sigma][:, spatial[m.positions]]
                for m, sigma in zip(members, (s1, s1, s2, s2))
            ]
            for first, second in ((0, 1), (2, 3)):
                if members[first].same(members[second]):
                    sets[second] = sets[first]  # one set: PySCF packs the pair
            self.sources[(s1, s2)] = (PackedIntegrals(mf, sets, ao), members)

    def __call__(self, p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        """(pq|rs) for arrays of spin-orbital indices (natural order) within the subsets."""
        out = np.zeros((len(p), len(q), len(r), len(s)))
        for (s1, s2), (integrals, members) in self.sources.items():
            masks = [self.spin[x] == sigma for x, sigma in zip((p, q, r, s), (s1, s1, s2, s2))]
            if not all(m.any() for m in masks):
                continue
            local = [subset.local(x[m]) for subset, x, m in zip(members, (p, q, r, s), masks)]
            out[np.ix_(*masks)] = integrals.block(*local)
        return out

    def antisymmetrized(
        self, p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray
    ) -> np.ndarray:
        """<pq||rs> = (pr|qs) - (ps|qr)."""
        return self(p, r, q, s).transpose(0, 2, 1, 3) - self(p, s, q, r).transpose(0, 2, 3, 1)


def spin_orbital_problem(
    mf: Any,
    *,
    frozen: Any = None,
    tile: int = 16,
    context: Context | None = None,
    semicanonical: bool = False,
) -> SpinOrbitalProblem:
    """Build the spin-orbital CC problem of a converged PySCF mean field.

    Args:
        mf: a converged RHF, UHF or ROHF object (with or without point-group symmetry).
        frozen: PySCF's ``frozen``: None or 0 for all electrons, n for the n lowest orbitals of
            each spin, a list of MO indices, or (UHF) a pair of lists, one per spin.
        tile: tile size of the spaces.
        context: where the tensors live.
        semicanonical: for an ROHF reference, rotate to its semicanonical orbitals first (and
            freeze among those), as the standard ROHF-CCSD(T) does; ignored for others.
    """
    from pyscf import scf

    reference = _reference(mf)
    if not getattr(mf, "converged", False):
        raise ValueError(
            "the mean-field calculation has not converged; converge it first "
            "(raise max_cycle, or try another initial guess)."
        )
    ctx = context if context is not None else default_context()
    mol = mf.mol
    umf = scf.addons.convert_to_uhf(mf)
    coeffs = list(umf.mo_coeff)
    occupations = list(umf.mo_occ)
    fock_ao = umf.get_fock(dm=umf.make_rdm1())
    semicanonical = semicanonical and reference == "rohf"
    if semicanonical:
        coeffs, _ = semicanonical_orbitals(mol, coeffs, list(fock_ao), occupations)
    frozen_sets = frozen_orbitals(frozen, [occupations[0]] if reference != "uhf" else occupations)
    orbsym = [orbital_irreps(mol, coeffs[s]) for s in (0, 1)]

    # Spin orbitals in "natural" order: alpha occupied, beta occupied | alpha virtual, beta virtual.
    occ_idx, vir_idx = (
        list(x) for x in zip(*(active_orbitals(occupations[s], frozen_sets[s]) for s in (0, 1)))
    )
    fock_mo = [coeffs[s].T @ fock_ao[s] @ coeffs[s] for s in (0, 1)]

    def space(indices: list[np.ndarray], kind: str, name: str) -> Space:
        return Space(
            [int(orbsym[s][p]) for s in (0, 1) for p in indices[s]],
            spins=["alpha"] * len(indices[0]) + ["beta"] * len(indices[1]),
            energies=[float(fock_mo[s][p, p]) for s in (0, 1) for p in indices[s]],
            tile=tile,
            kind=kind,
            name=name,
        )

    occ = space(occ_idx, "occupied", "o")
    vir = space(vir_idx, "virtual", "v")
    spaces = {"o": occ, "v": vir}

    # Active spin-orbital list: (spin, spatial index) in natural order, occupied then virtual.
    active = [(s, int(p)) for s in (0, 1) for p in occ_idx[s]] + [
        (s, int(p)) for s in (0, 1) for p in vir_idx[s]
    ]
    n_occ_so = occ.size
    spin = np.array([s for s, _ in active])
    act = [np.array([p for s, p in active if s == sigma]) for sigma in (0, 1)]
    pos = [np.flatnonzero(spin == sigma) for sigma in (0, 1)]
    nso = len(active)
    # Each spin orbital's position among its own spin's active spatial orbitals.
    spatial = np.empty(nso, dtype=int)
    for sigma in (0, 1):
        spatial[pos[sigma]] = np.arange(len(pos[sigma]))
    active_coefficients = [coeffs[sigma][:, act[sigma]] for sigma in (0, 1)]

    def reader_for(subsets: tuple[Subset, ...]) -> Reader:
        # <pq||rs> = (pr|qs) - (ps|qr): chemists' indices p, r or s, q, s or r.
        ket = Subset(np.union1d(subsets[2].positions, subsets[3].positions))
        chemists = (subsets[0], ket, subsets[1], ket)
        return _SpinCoulomb(mf, active_coefficients, spin, spatial, chemists, ao).antisymmetrized

    # Natural -> sorted order of each space (Space sorts by spin, irrep, energy).
    sorted_index = {"o": np.array(occ.order), "v": n_occ_so + np.array(vir.order)}
    eri = {
        name: Tensor([spaces[c] for c in name], generators, name=f"<{name}>", context=ctx)
        for name, generators in _INTEGRAL_SYMMETRY.items()
    }
    held, ao = _ao_integrals(mf, ctx, eri.values())
    load_in_batches(
        [IntegralClass(t, [sorted_index[c] for c in name]) for name, t in eri.items()],
        reader_for,
        mol.nao,
        batch_elements(ctx.memory_budget),
        VERIFY_ELEMENTS,
        held,
    )
    fock_so = np.zeros((nso, nso))
    for sigma in (0, 1):
        fock_so[np.ix_(pos[sigma], pos[sigma])] = fock_mo[sigma][np.ix_(act[sigma], act[sigma])]
    fock = {}
    for name in ("oo", "ov", "vv"):
        idx = [sorted_index[c] for c in name]
        t = Tensor([spaces[c] for c in name], name=f"f{name}", context=ctx)
        t.from_dense_(fock_so[np.ix_(*idx)], atol=1e-9)
        fock[name] = t
    return SpinOrbitalProblem(
        occ, vir, fock, eri, float(mf.e_tot), frozen_sets, reference, semicanonical
    )
