"""Checkpoints of CC iterations: written atomically after every iteration, read back by --restart.

A checkpoint is an HDF5 file holding what a restart needs so that it never depends on landing on
the same SCF solution again:

- ``/scf``: the reference's MO coefficients, occupations and energies, and its energy;
- ``/amplitudes/<n>``: each amplitude tensor's canonical non-zero blocks, cut one block per spin
  and irrep segment of each index (``Tensor.retiled(None)``), so that what is stored depends on
  neither the tile size, nor the thread count, nor the policy; ``values`` are the blocks one
  after the other, ``blocks`` their segment tuples and ``extents`` their sizes, which a restart
  checks;
- ``/diis``: the DIIS history, as vectors over the same segment tiling (cc/vector.py), so that a
  restart at another tile size keeps it;
- attributes: the format, the identity of the calculation (molecule, basis, reference, method,
  frozen orbitals, point group...; a restart must match it exactly), the cycle and energy, and
  whether the iterations had converged (a restart then goes straight on to (T)).

Every dataset carries HDF5's Fletcher-32 checksum, so a corrupted file is refused on reading.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.files import interrupts_held, replaced_atomically
from tilecc.tensor import Tensor

FORMAT = 3

#: What HDF5 raises on a damaged file: its library reports through several exception types,
#: and a checkpoint that fails to read in any of them is refused as damaged.
_DAMAGE = (OSError, KeyError, ValueError, RuntimeError, TypeError, IndexError, AttributeError)


def molecule_identity(mol: Any, reference: str) -> dict[str, Any]:
    """What the SCF part of a checkpoint belongs to: molecule, basis, ECP, reference."""
    geometry = np.round(mol.atom_coords(), 8).tolist()
    basis = json.dumps(mol._basis, sort_keys=True, default=str)
    return {
        "format": FORMAT,
        "atoms": [mol.atom_symbol(i) for i in range(mol.natm)],
        "geometry_hash": _digest(json.dumps(geometry)),
        "basis": str(mol.basis) if isinstance(mol.basis, str) else "file",
        "basis_hash": _digest(basis),
        "cartesian": bool(mol.cart),
        "ecp": sorted(mol.ecp) if isinstance(mol.ecp, dict) else str(mol.ecp or ""),
        "charge": int(mol.charge),
        "spin": int(mol.spin),
        "reference": reference,
        "point_group": str(mol.groupname) if mol.symmetry else "C1",
    }


def identity(
    mf: Any, method: str, frozen: Sequence[Sequence[int]], orbitals: str = "canonical"
) -> dict[str, Any]:
    """What a checkpoint belongs to: a restart must match it exactly."""
    return {
        **molecule_identity(mf.mol, reference_name(mf)),
        "method": method,
        "frozen": [list(orbitals) for orbitals in frozen],
        "orbitals": orbitals,
    }


def reference_name(mf: Any) -> str:
    from pyscf import scf

    if isinstance(mf, scf.uhf.UHF):
        return "uhf"
    return "rohf" if isinstance(mf, scf.rohf.ROHF) else "rhf"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class SCFSolution:
    """The reference's orbitals: enough to rebuild the mean field without an SCF."""

    mo_coeff: np.ndarray
    mo_occ: np.ndarray
    mo_energy: np.ndarray
    e_tot: float

    @classmethod
    def of(cls, mf: Any) -> SCFSolution:
        return cls(
            np.asarray(mf.mo_coeff),
            np.asarray(mf.mo_occ),
            np.asarray(mf.mo_energy),
            float(mf.e_tot),
        )

    def apply_to(self, mf: Any) -> Any:
        """``mf`` (an unconverged mean field of the same molecule) as this solution."""
        mf.mo_coeff, mf.mo_occ, mf.mo_energy = self.mo_coeff, self.mo_occ, self.mo_energy
        mf.e_tot, mf.converged = self.e_tot, True
        return mf


@dataclass
class State:
    """One iteration's state: written after it, read back by a restart."""

    cycle: int
    e_corr: float
    scf: SCFSolution
    amplitudes: Sequence[Tensor]
    #: The DIIS history, over the segment tiling (SegmentPacking.to_segments).
    diis_vectors: list[np.ndarray] = field(default_factory=list)
    diis_errors: list[np.ndarray] = field(default_factory=list)
    #: The iterations converged: a restart goes straight on to what follows them.
    converged: bool = False


@dataclass
class Restored:
    """What :func:`load` gives back besides the amplitudes it fills in."""

    cycle: int
    e_corr: float
    diis_vectors: list[np.ndarray]
    diis_errors: list[np.ndarray]
    converged: bool


def save(path: Path, ident: dict[str, Any], state: State, *, write: bool = True) -> None:
    """Write to a temporary file beside ``path`` and rename it over: a reader (or a restart after
    a kill at any moment) sees the previous checkpoint or this one, never a partial file. On
    several ranks every rank calls it (gathering the amplitudes takes them all) and only the one
    given ``write`` writes."""
    import h5py

    segments = []
    for tensor in state.amplitudes:
        by_segment = tensor.retiled(None)
        segments.append(
            (by_segment.to_vector(), _block_tuples(by_segment), _block_extents(by_segment))
        )
    if not write:
        return
    with interrupts_held(), replaced_atomically(path, "w+b") as f, h5py.File(f, "w") as h5:
        h5.attrs["format"] = FORMAT
        h5.attrs["identity"] = json.dumps(ident)
        h5.attrs["cycle"] = state.cycle
        h5.attrs["e_corr"] = state.e_corr
        h5.attrs["converged"] = state.converged
        scf = h5.create_group("scf")
        scf.attrs["e_tot"] = state.scf.e_tot
        for name in ("mo_coeff", "mo_occ", "mo_energy"):
            _write(scf, name, getattr(state.scf, name))
        amplitudes = h5.create_group("amplitudes")
        for n, (values, blocks, extents) in enumerate(segments):
            group = amplitudes.create_group(str(n))
            _write(group, "values", values)
            _write(group, "blocks", blocks)
            _write(group, "extents", extents)
        diis = h5.create_group("diis")
        _write(diis, "vectors", np.array(state.diis_vectors, dtype=float))
        _write(diis, "errors", np.array(state.diis_errors, dtype=float))


def _write(group: Any, name: str, data: np.ndarray) -> None:
    array = np.asarray(data)
    # Fletcher-32 needs chunked storage, and HDF5 refuses chunks of an empty dataset.
    checksum = {"fletcher32": True} if array.size else {}
    group.create_dataset(name, data=array, **checksum)


def _block_tuples(tensor: Tensor) -> np.ndarray:
    shape = tensor._shape
    return np.array(
        [shape.block_tiles(b) for b in range(shape.num_blocks)], dtype=np.int64
    ).reshape(shape.num_blocks, tensor.rank)


def _block_extents(tensor: Tensor) -> np.ndarray:
    tiles = [space.tiles for space in tensor.spaces]
    return np.array(
        [[tiles[k][t][1] for k, t in enumerate(row)] for row in _block_tuples(tensor)],
        dtype=np.int64,
    ).reshape(-1, tensor.rank)


def read_scf(path: Path, molecule: dict[str, Any]) -> SCFSolution:
    """The SCF solution of a checkpoint, after checking that it belongs to this molecule, basis
    and reference (``molecule`` is :func:`molecule_identity`); read before any SCF is run."""
    with _opened(path) as h5:
        stored = _identity(path, h5)
        _refuse_other(path, stored, molecule)
        try:
            # Every dataset read once, so that a checksum that fails does so now, before the SCF
            # that the restart would otherwise have run for nothing.
            h5.visititems(_read_through)
            scf = h5["scf"]
            return SCFSolution(
                scf["mo_coeff"][()],
                scf["mo_occ"][()],
                scf["mo_energy"][()],
                float(scf.attrs["e_tot"]),
            )
        except _DAMAGE as exc:
            raise _corrupt(path, exc) from None


def _read_through(_: str, item: Any) -> None:
    """Read a dataset whole (visititems stops at the first callback that returns a value)."""
    if hasattr(item, "shape"):
        item[()]


def load(path: Path, ident: dict[str, Any], amplitudes: Sequence[Tensor]) -> Restored:
    """Fill ``amplitudes`` from a checkpoint, refusing one written for another calculation."""
    with _opened(path) as h5:
        stored = _identity(path, h5)
        _refuse_other(path, stored, ident)
        try:
            group = h5["amplitudes"]
            if len(group) != len(amplitudes):
                raise KeyError(f"{len(group)} amplitude tensors instead of {len(amplitudes)}")
            for n, tensor in enumerate(amplitudes):
                by_segment = tensor.retiled(None)
                blocks, extents = group[str(n)]["blocks"][()], group[str(n)]["extents"][()]
                if not (
                    np.array_equal(blocks, _block_tuples(by_segment))
                    and np.array_equal(extents, _block_extents(by_segment))
                ):
                    raise KeyError(f"the blocks of amplitude tensor {n} differ")
                by_segment.from_vector_(group[str(n)]["values"][()])
                tensor.copy_retiled_(by_segment)
            diis = h5["diis"]
            return Restored(
                int(h5.attrs["cycle"]),
                float(h5.attrs["e_corr"]),
                list(diis["vectors"][()]),
                list(diis["errors"][()]),
                bool(h5.attrs["converged"]),
            )
        except _DAMAGE as exc:
            raise _corrupt(path, exc) from None


@contextmanager
def _opened(path: Path) -> Iterator[Any]:
    """An HDF5 checkpoint opened for reading, with every failure to open as one sentence."""
    import h5py

    if not path.is_file():
        raise ValueError(
            f"cannot restart: checkpoint {path} does not exist; run once with "
            f"--checkpoint {path} first."
        )
    try:
        h5 = h5py.File(path, "r")
    except _DAMAGE:
        raise ValueError(
            f"cannot restart: {path} is not a tilecc checkpoint (not an HDF5 file, or a damaged "
            f"one); remove it or point --checkpoint elsewhere."
        ) from None
    with h5:
        yield h5


def _identity(path: Path, h5: Any) -> dict[str, Any]:
    try:
        version = int(h5.attrs.get("format", -1))
    except _DAMAGE as exc:
        raise _corrupt(path, exc) from None
    if version != FORMAT:
        raise ValueError(
            f"cannot restart: {path} is not a tilecc checkpoint of format {FORMAT}; remove it or "
            f"point --checkpoint elsewhere."
        )
    try:
        return dict(json.loads(str(h5.attrs["identity"])))
    except _DAMAGE as exc:
        raise _corrupt(path, exc) from None


def _refuse_other(path: Path, stored: dict[str, Any], ident: dict[str, Any]) -> None:
    differing = [k for k in ident if stored.get(k) != ident[k]]
    if differing:
        detail = ", ".join(f"{k} {stored.get(k)!r} instead of {ident[k]!r}" for k in differing)
        raise ValueError(
            f"cannot restart: checkpoint {path} belongs to another calculation "
            f"({detail}); remove it or point --checkpoint elsewhere."
        )


def _corrupt(path: Path, exc: BaseException) -> ValueError:
    return ValueError(
        f"cannot restart: checkpoint {path} is damaged ({exc}); remove it or point --checkpoint "
        f"elsewhere."
    )
