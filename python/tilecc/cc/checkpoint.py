"""Checkpoints of CC iterations: written atomically after every iteration, read back by --restart.

What is stored is independent of the tile size, thread count and policy: t1 and t2 as dense
arrays over the spaces' sorted orbitals (spin, irrep, energy), which depend only on the molecule,
basis, reference, frozen core and point group, all recorded and checked on restart. The DIIS
history is stored as packed vectors with the tile size they were packed at; a restart with another
tile size starts DIIS afresh (and converges to the same energy).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.atomic import replaced_atomically

FORMAT = 2


def identity(mf: Any, method: str, frozen: tuple[tuple[int, ...], ...]) -> dict[str, Any]:
    """What a checkpoint belongs to: a restart must match it exactly."""
    mol = mf.mol
    geometry = np.round(mol.atom_coords(), 8).tolist()
    return {
        "format": FORMAT,
        "method": method,
        "atoms": [mol.atom_symbol(i) for i in range(mol.natm)],
        "geometry_hash": hashlib.sha256(json.dumps(geometry).encode()).hexdigest()[:16],
        "basis": str(mol.basis),
        "charge": int(mol.charge),
        "spin": int(mol.spin),
        "reference": type(mf).__name__,
        "frozen": [list(orbitals) for orbitals in frozen],
        "point_group": str(mol.groupname) if mol.symmetry else "C1",
    }


@dataclass
class State:
    cycle: int
    e_corr: float
    amplitudes: list[np.ndarray]  # dense, in the spaces' sorted orbital order
    diis_vectors: list[np.ndarray]
    diis_errors: list[np.ndarray]
    diis_tile: int


def save(path: Path, ident: dict[str, Any], state: State) -> None:
    """Write to a temporary file beside ``path`` and rename it over: a reader (or a restart after
    a kill at any moment) sees the previous checkpoint or this one, never a partial file."""
    amplitudes = {f"amplitude{n}": a for n, a in enumerate(state.amplitudes)}
    with replaced_atomically(path, "wb") as f:
        # numpy's stub types savez's **kwds as bool; they are arrays.
        np.savez(
            f,
            identity=json.dumps(ident),
            cycle=state.cycle,
            e_corr=state.e_corr,
            count=len(state.amplitudes),
            diis_tile=state.diis_tile,
            diis_vectors=np.array(state.diis_vectors),
            diis_errors=np.array(state.diis_errors),
            **amplitudes,  # type: ignore[arg-type]
        )


def load(path: Path, ident: dict[str, Any]) -> State:
    """Read a checkpoint, refusing one written for another calculation."""
    if not path.is_file():
        raise ValueError(
            f"cannot restart: checkpoint {path} does not exist; run once with "
            f"--checkpoint {path} first."
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            stored = json.loads(str(data["identity"]))
            amplitudes = [data[f"amplitude{n}"].copy() for n in range(int(data["count"]))]
            state = State(
                int(data["cycle"]),
                float(data["e_corr"]),
                amplitudes,
                list(data["diis_vectors"]),
                list(data["diis_errors"]),
                int(data["diis_tile"]),
            )
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"cannot restart: {path} is not a tilecc checkpoint ({exc}).") from None
    differing = [k for k in ident if stored.get(k) != ident[k]]
    if differing:
        detail = ", ".join(f"{k} {stored.get(k)!r} instead of {ident[k]!r}" for k in differing)
        raise ValueError(
            f"cannot restart: checkpoint {path} belongs to another calculation "
            f"({detail}); remove it or point --checkpoint elsewhere."
        )
    return state
