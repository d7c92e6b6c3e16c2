"""MO integrals transformed once into a file and read back into block tensors, for a job whose
AO integrals do not fit in memory beside its tensors: there each batch of
:mod:`tilecc.host.integrals` would compute every AO integral again (benzene/cc-pVTZ: tens of
batches under a quarter of its memory, each computing 4.9 GB of AO integrals).

PySCF's out-of-core transformation writes (pq|rs) over every active orbital once, both pairs
packed (p >= q, r >= s), its buffers within a share of the budget. The pairs whose larger orbital
lies in one tile are one contiguous run of columns, so every stored block of every class lies in
the rows of its bra's pairs by the column run of its ket's larger tile. The blocks are read in
groups that share both, one read of those rows and columns each (a tile's width of rows per
orbital of the larger tile: a few MB), so every element is read once; the file is removed
afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.host.integrals import IntegralClass, packed_pair

#: The dataset PySCF writes the integrals into.
DATASET = "eri_mo"

#: Disk space kept free beside the file (PySCF's half-transformed swap file takes as much again).
DISK_FACTOR = 2.2


def file_bytes(n_active: int) -> int:
    """The bytes of the file of (pq|rs) over ``n_active`` orbitals, both pairs packed."""
    pairs = n_active * (n_active + 1) // 2
    return 8 * pairs * pairs


def fits_on_disk(directory: str | None, n_active: int) -> bool:
    """Whether the file and PySCF's swap file fit in the free space under ``directory`` (None:
    the system's temporary directory)."""
    where = Path(directory) if directory else Path(tempfile.gettempdir())
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return False
    return free >= DISK_FACTOR * file_bytes(n_active)


@contextmanager
def transformed_file(
    mf: Any, active: np.ndarray, directory: str | None, max_memory_bytes: int
) -> Iterator[Path]:
    """(pq|rs) over the columns of ``active`` in an HDF5 file under ``directory``, made by
    PySCF's out-of-core transformation with at most ``max_memory_bytes`` of buffers; removed on
    leaving, also when reading it raises."""
    from pyscf import ao2mo, lib

    try:
        folder = tempfile.mkdtemp(prefix="tilecc-integrals-", dir=directory)
    except OSError as e:
        raise ValueError(
            f"cannot make a directory for the transformed integrals under "
            f"{directory or tempfile.gettempdir()} ({e.strerror}); give --scratch a writable "
            f"directory with {DISK_FACTOR * file_bytes(active.shape[1]) / 1e9:.1f} GB free."
        ) from e
    path = Path(folder) / "integrals.h5"
    # PySCF's swap file of half-transformed integrals goes where its TMPDIR says: here too.
    swap_directory = lib.param.TMPDIR
    try:
        megabytes = max(64, max_memory_bytes // 1_000_000)
        lib.param.TMPDIR = folder
        ao2mo.outcore.general(
            mf.mol,
            (active,) * 4,
            str(path),
            dataname=DATASET,
            max_memory=megabytes,
            ioblk_size=max(16, megabytes // 4),
            compact=True,
            verbose=0,
        )
        lib.param.TMPDIR = swap_directory
        yield path
    finally:
        lib.param.TMPDIR = swap_directory
        shutil.rmtree(folder, ignore_errors=True)


def load_from_file(classes: Sequence[IntegralClass], path: Path) -> None:
    """Fill every stored block of the classes from the file (see the module): group by group of
    blocks sharing their bra's tiles and their ket's column run, one read each."""
    import h5py

    groups: dict[tuple[int, int, int, int], list[tuple[int, int, list[np.ndarray]]]] = {}
    for c, integral_class in enumerate(classes):
        for slot, ranges in integral_class.tensor.stored_blocks():
            positions = [integral_class.index[k][r] for k, r in enumerate(ranges)]
            first, second = sorted((int(positions[0][0]), int(positions[1][0])))
            key = (first, second, *_pair_run(*positions[2:]))
            groups.setdefault(key, []).append((c, slot, positions))
    with h5py.File(path, "r") as f:
        data = f[DATASET]
        for (_, _, c0, c1), blocks in sorted(groups.items()):
            _, _, (p, q, _, _) = blocks[0]
            rows = np.unique(packed_pair(p[:, None], q[None, :]))
            part = np.asarray(data[rows, c0:c1])
            for c, slot, (p, q, r, s) in blocks:
                at = np.searchsorted(rows, packed_pair(p[:, None], q[None, :]).ravel())
                cols = packed_pair(r[:, None], s[None, :]).ravel() - c0
                block = part[np.ix_(at, cols)].reshape(len(p), len(q), len(r), len(s))
                classes[c].tensor.write_block_(slot, block)
    for integral_class in classes:
        integral_class.tensor.complete_writes_()


def _pair_run(p: np.ndarray, q: np.ndarray) -> tuple[int, int]:
    """The packed indices [first, last) of every pair whose larger orbital lies in the run of
    positions holding the larger of p's and q's (each a tile: a contiguous run of positions).

    >>> _pair_run(np.arange(4, 6), np.arange(0, 2))  # pairs (4..5, 0..5): 10 to 20
    (10, 21)
    """
    run = p if p.max() >= q.max() else q
    low, high = int(run.min()), int(run.max())
    return low * (low + 1) // 2, (high + 1) * (high + 2) // 2
