"""MO integrals (pq|rs) transformed in batches straight into block tensors.

An integral class is loaded batch by batch: a batch is a run of tiles of the class's first index
with every stored block that starts with one of them, and it is transformed by PySCF over just
the orbitals those blocks touch on each index (density-fitted for a density-fitted mean field).
So the host never holds more than one batch of MO integrals (its size is capped by the memory
budget), a stored block's symmetry restricts what is transformed (the stored blocks of (vv|vv)
start at their smallest tile, so the batch of tile P needs only orbitals from P on), and on
several ranks each rank transforms a share of the batches (LPT over their predicted cost) and
writes the blocks to the ranks that own them: no rank transforms everything or holds a whole
class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc import mpi
from tilecc.memory import available_memory
from tilecc.tensor import Tensor

#: The most doubles one batch's transformation holds (its half-transformed and final arrays)
#: when no memory budget is set: 2 GiB.
DEFAULT_BATCH_ELEMENTS = 1 << 28

#: Batches made per rank (at least) on several ranks.
BATCHES_PER_RANK = 3

#: The share of a memory budget that one batch's transformation may hold.
BUDGET_SHARE = 0.25

#: Reads (pq|rs) for arrays of positions on each index (positions as the caller's index maps
#: give them).
Reader = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class _Pairs:
    """How a pair (p, q) of orbital indices addresses one axis of the packed array: the
    triangle p >= q when both indices run over the same orbitals (PySCF packs those), else the
    rectangle p * n + q."""

    def __init__(self, first: int, second: int, axis_length: int) -> None:
        self.packed = first == second and axis_length == first * (first + 1) // 2
        self.second = second

    def index(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return packed_pair(p, q) if self.packed else p * self.second + q


def packed_pair(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """PySCF's packed index of each pair (p, q): the larger orbital's triangle, then the
    smaller."""
    high, low = np.maximum(p, q), np.minimum(p, q)
    return high * (high + 1) // 2 + low


def held_ao_bytes(mf: Any, memory_budget: int | None, beside: int) -> int:
    """The bytes of AO integrals (PySCF's s8 array) to compute once and hold for every batch of
    a job's transformation, or 0. Only for a mean field that holds none itself and is not
    density-fitted, in one process (on several ranks no rank holds a whole 4-index array), and
    when they fit in the budget (else the memory available) beside ``beside`` bytes (the
    integral tensors and one batch). Without them every batch has PySCF compute all the AO
    integrals again (ao2mo.general from the molecule): for benzene/cc-pVTZ 44 s per batch of 16
    orbitals against 28 s from held ones."""
    if getattr(mf, "_eri", None) is not None or getattr(mf, "with_df", None) is not None:
        return 0
    if mpi.world().size > 1:
        return 0
    pairs = mf.mol.nao * (mf.mol.nao + 1) // 2
    need = 8 * (pairs * (pairs + 1) // 2)
    limit = memory_budget if memory_budget else available_memory()
    return need if need + beside <= limit else 0


def ao_integrals(mf: Any) -> np.ndarray:
    """The AO integrals of the mean field's molecule, packed s8 as PySCF's SCF holds them."""
    return np.asarray(mf.mol.intor("int2e", aosym="s8"))


def transform(
    mf: Any, coefficients: Sequence[np.ndarray], ao: np.ndarray | None = None
) -> np.ndarray:
    """PySCF's pair-packed (pq|rs) over four sets of MO coefficients (a pair whose two sets are
    equal is packed): from AO integrals held for the job's batches (``ao``, see held_ao_bytes) or
    by the mean field, density-fitted for a density-fitted mean field, else computed from the
    molecule."""
    from pyscf import ao2mo

    coefficients = tuple(coefficients)
    if ao is not None:
        return np.asarray(ao2mo.incore.general(ao, coefficients, compact=True))
    with_df = getattr(mf, "with_df", None)
    if with_df is not None:
        # A density-fitted mean field gets density-fitted integrals (sum_L B_pq^L B_rs^L), as
        # PySCF's CCSD(mf) does for one: exact integrals would pair a DF reference with another
        # Hamiltonian.
        array = with_df.ao2mo(coefficients, compact=True)
    elif getattr(mf, "_eri", None) is not None:
        array = ao2mo.incore.general(mf._eri, coefficients, compact=True)
    else:
        array = ao2mo.general(mf.mol, coefficients, compact=True)
    return np.asarray(array).reshape(-1, np.asarray(array).shape[-1])


def transform_elements(n_ao: int, sizes: Sequence[int]) -> int:
    """The doubles a transformation over orbital sets of these sizes holds at its peak: the
    bra pairs half-transformed over the AO pairs, then over the ket pairs."""
    bra = sizes[0] * sizes[1]
    ket = sizes[2] * sizes[3]
    return bra * (n_ao * (n_ao + 1) // 2 + ket)


class PackedIntegrals:
    """(pq|rs) over four sets of MO coefficients (pass equal arrays for a pair that runs over
    the same orbitals, so that PySCF packs it), read out block by block."""

    def __init__(
        self, mf: Any, coefficients: Sequence[np.ndarray], ao: np.ndarray | None = None
    ) -> None:
        self.array = transform(mf, coefficients, ao)
        n = [c.shape[1] for c in coefficients]
        self.rows = _Pairs(n[0], n[1], self.array.shape[0])
        self.cols = _Pairs(n[2], n[3], self.array.shape[1])

    def block(self, p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The dense (pq|rs) for these orbital index arrays (positions in the coefficients)."""
        rows = self.rows.index(p[:, None], q[None, :]).ravel()
        cols = self.cols.index(r[:, None], s[None, :]).ravel()
        return self.array[np.ix_(rows, cols)].reshape(len(p), len(q), len(r), len(s))


@dataclass(frozen=True)
class Subset:
    """Some orbitals of a set, by sorted position in it; `local` finds positions within the
    subset."""

    positions: np.ndarray

    def local(self, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.positions, positions)

    def same(self, other: Subset) -> bool:
        return np.array_equal(self.positions, other.positions)


@dataclass(frozen=True)
class IntegralClass:
    """A tensor of integrals to fill, and the source position of each sorted orbital of each of
    its indices (positions in one numbering shared by the classes loaded together)."""

    tensor: Tensor
    index: list[np.ndarray]


@dataclass(frozen=True)
class _Batch:
    #: (class, slot, ranges) of the stored blocks the batch fills.
    blocks: list[tuple[int, int, tuple[slice, ...]]]
    subsets: tuple[Subset, ...]

    def elements(self, n_ao: int) -> int:
        return transform_elements(n_ao, [len(s.positions) for s in self.subsets])


def batch_elements(memory_budget: int | None) -> int:
    """How many doubles one batch may hold: a share of the memory budget, or the default."""
    if memory_budget:
        return max(1, int(memory_budget * BUDGET_SHARE) // 8)
    return DEFAULT_BATCH_ELEMENTS


def load_in_batches(
    classes: Sequence[IntegralClass],
    reader_for: Callable[[tuple[Subset, ...]], Reader],
    n_ao: int,
    max_elements: int,
    verify_elements: int = 0,
    held_bytes: int = 0,
) -> None:
    """Fill every stored block of the classes batch by batch (see the module): one
    ``reader_for(subsets)`` per batch transforms the integrals over those source positions (a
    Subset per index) and reads them out for every class. A class of at most
    ``verify_elements`` dense elements that one batch holds whole, in one process, is read as
    one dense array and checked against its tensor's symmetry and sparsity (which checks the
    orbitals' irrep labels). Collective on several ranks. A planning context (``tilecc plan``)
    transforms nothing. ``held_bytes``: AO integrals the readers hold throughout (recorded in
    the context for the plan's peak)."""
    batches = _batches(classes, n_ao, max_elements)
    context = classes[0].tensor.context if classes else None
    if context is not None:
        context.largest_transform_bytes = max(
            context.largest_transform_bytes, 8 * max(b.elements(n_ao) for b in batches)
        )
        context.held_ao_bytes = max(context.held_ao_bytes, held_bytes)
        if context.planning:
            return
    comm = mpi.communicator()
    mine = (
        comm.share([float(b.elements(n_ao)) for b in batches])
        if comm is not None
        else range(len(batches))
    )
    for b in mine:
        batch = batches[b]
        read = reader_for(batch.subsets)
        held = {c for c, _, _ in batch.blocks}
        for c in sorted(held):
            t, index = classes[c].tensor, classes[c].index
            whole = len(batches) == 1
            if comm is None and whole and t.dense_elements <= verify_elements:
                t.from_dense_(read(*index), atol=1e-9)
                continue
            for _, slot, ranges in (x for x in batch.blocks if x[0] == c):
                t.write_block_(slot, read(*(position[r] for position, r in zip(index, ranges))))
        del read  # this batch's integrals go before the next batch's are made
    for integral_class in classes:
        integral_class.tensor.complete_writes_()


def batch_count(classes: Sequence[IntegralClass], n_ao: int, max_elements: int) -> int:
    """How many batches load_in_batches would transform the classes in."""
    return len(_batches(classes, n_ao, max_elements))


def _batches(classes: Sequence[IntegralClass], n_ao: int, max_elements: int) -> list[_Batch]:
    """Runs of first-index orbitals (whole tiles) whose transformation stays within
    max_elements (one tile's blocks may exceed it: they are the smallest batch there is), in a few
    batches per rank at least."""
    by_first: dict[int, list[tuple[int, int, tuple[slice, ...]]]] = {}
    for c, integral_class in enumerate(classes):
        first = integral_class.index[0]
        for slot, ranges in integral_class.tensor.stored_blocks():
            by_first.setdefault(int(first[ranges[0].start]), []).append((c, slot, ranges))
    groups = [by_first[start] for start in sorted(by_first)]

    def batch(blocks: list[tuple[int, int, tuple[slice, ...]]]) -> _Batch:
        subsets = tuple(
            Subset(np.unique(np.concatenate([classes[c].index[k][r[k]] for c, _, r in blocks])))
            for k in range(4)
        )
        return _Batch(blocks, subsets)

    ranks = mpi.world().size
    if ranks > 1 and groups:
        # A few batches per rank, so that LPT can even out their unequal sizes.
        whole = batch([b for g in groups for b in g]).elements(n_ao)
        max_elements = min(max_elements, -(-whole // (BATCHES_PER_RANK * ranks)))
    batches: list[_Batch] = []
    current: list[tuple[int, int, tuple[slice, ...]]] = []
    for group in groups:
        if current and batch(current + group).elements(n_ao) > max_elements:
            batches.append(batch(current))
            current = []
        current = current + group
    if current:
        batches.append(batch(current))
    return batches
