"""QCSchema in and out: a job from an ``AtomicInput``, its results as an ``AtomicResult``.

QCSchema (https://molssi-qc-schema.readthedocs.io) is what QCEngine and QCArchive exchange with
Psi4, NWChem and the other programs they drive. ``tilecc run --json`` writes a version-1
``AtomicResult``, validated with qcelemental: the energies under the standard property names,
and everything tilecc measured of itself (timings, runtime, blocks, flops, communication, I/O)
under ``extras``. ``tilecc run --qcschema input.json`` reads a version-1 or version-2
``AtomicInput``; its keywords are the ``tilecc run`` options below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilecc.files import read_text_input

#: The drivers tilecc computes: energies only (no gradients yet).
DRIVERS = ("energy",)

#: Keywords an AtomicInput may carry: the ``tilecc run`` option of each and its type.
KEYWORDS: dict[str, type] = {
    "reference": str,
    "frozen_core": bool,
    "frozen": int,
    "symmetry": bool,
    "point_group": str,
    "cartesian": bool,
    "semicanonical": bool,
    "scf_conv": float,
    "scf_max_iter": int,
    "scf_guess": str,
    "stability": bool,
    "tile": int,
    "conv_tol": float,
    "conv_tol_normt": float,
    "max_iter": int,
}


@dataclass
class JobInput:
    """What an AtomicInput asks for, in the terms of ``tilecc run``."""

    #: (symbol, x, y, z) in Bohr.
    atoms: list[tuple[str, float, float, float]]
    charge: int
    spin: int
    method: str
    basis: str
    keywords: dict[str, Any]
    #: The input as given (version 1), echoed into the result.
    schema: dict[str, Any]


def read_input(path: Path) -> JobInput:
    """The job of a QCSchema ``AtomicInput`` file (version 1 or 2); ValueError, in one sentence
    naming the problem, for anything tilecc cannot run."""
    from qcelemental.models import v1, v2

    try:
        data = json.loads(read_text_input(path, "QCSchema input"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc.msg} at line {exc.lineno}).") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, not a QCSchema AtomicInput.")
    try:
        if data.get("schema_version") == 2 or "specification" in data:
            model = v2.AtomicInput(**data).convert_v(1)
        else:
            model = v1.AtomicInput(**data)
    except KeyError as exc:  # qcelemental's molecule parser, on a field left out
        raise ValueError(
            f"{path} is not a valid QCSchema AtomicInput: field {exc} is missing."
        ) from None
    except Exception as exc:
        lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
        reason = "; ".join(lines[:3]) if lines else type(exc).__name__
        raise ValueError(f"{path} is not a valid QCSchema AtomicInput: {reason}.") from None
    driver = str(getattr(model.driver, "value", model.driver))
    if driver not in DRIVERS:
        raise ValueError(
            f"{path} asks for driver {driver!r}; tilecc computes energies only: use "
            f"driver 'energy'."
        )
    method, basis = model.model.method.lower(), model.model.basis
    if not basis:
        raise ValueError(f"{path} names no basis set; give model.basis (e.g. 'cc-pvdz').")
    keywords = dict(model.keywords)
    for key, value in keywords.items():
        if key not in KEYWORDS:
            raise ValueError(
                f"{path}: unknown keyword {key!r}; tilecc knows {', '.join(sorted(KEYWORDS))}."
            )
        kind = KEYWORDS[key]
        # JSON's 1 is an int that a float keyword takes; true is never a number.
        found = float if kind is float and type(value) is int else type(value)
        if found is not kind:
            raise ValueError(f"{path}: keyword {key!r} must be a {kind.__name__}, got {value!r}.")
    molecule = model.molecule
    if not all(molecule.real):
        raise ValueError(f"{path}: the molecule has ghost atoms, which tilecc does not support.")
    geometry = molecule.geometry.reshape(-1, 3)
    atoms = [
        (str(symbol), float(x), float(y), float(z))
        for symbol, (x, y, z) in zip(molecule.symbols, geometry, strict=True)
    ]
    charge = molecule.molecular_charge
    if charge != int(charge):
        raise ValueError(f"{path}: molecular_charge must be a whole number, got {charge}.")
    return JobInput(
        atoms=atoms,
        charge=int(charge),
        spin=int(molecule.molecular_multiplicity) - 1,
        method=method,
        basis=basis,
        keywords=keywords,
        schema=json.loads(model.serialize("json")),
    )


def molecule_of(mol: Any) -> dict[str, Any]:
    """A PySCF Mole as a QCSchema molecule: its atoms where PySCF placed them (Bohr)."""
    return {
        "symbols": [mol.atom_pure_symbol(a) for a in range(mol.natm)],
        "geometry": mol.atom_coords(unit="Bohr").ravel().tolist(),
        "molecular_charge": mol.charge,
        "molecular_multiplicity": mol.spin + 1,
        "fix_com": True,
        "fix_orientation": True,
    }


def properties(mol: Any, mf: Any, cc: Any, method: str, scf_cycles: int | None) -> dict[str, Any]:
    """The standard QCSchema properties of a finished job."""
    import numpy as np

    nmo = int(np.asarray(mf.mo_energy).shape[-1])
    found: dict[str, Any] = {
        "calcinfo_nbasis": int(mol.nao),
        "calcinfo_nmo": nmo,
        "calcinfo_nalpha": int(mol.nelec[0]),
        "calcinfo_nbeta": int(mol.nelec[1]),
        "calcinfo_natom": int(mol.natm),
        "nuclear_repulsion_energy": float(mol.energy_nuc()),
        "scf_total_energy": float(mf.e_tot),
        "return_energy": float(cc.e_tot) + (cc.e_t or 0.0),
    }
    if scf_cycles:
        found["scf_iterations"] = int(scf_cycles)
    if method in ("ccsd", "ccsd(t)"):
        found |= {
            "ccsd_correlation_energy": float(cc.e_corr),
            "ccsd_total_energy": float(cc.e_tot),
            "ccsd_iterations": int(cc.cycles),
        }
    if cc.e_t is not None:
        found |= {
            "ccsd_prt_pr_correlation_energy": float(cc.e_corr) + cc.e_t,
            "ccsd_prt_pr_total_energy": float(cc.e_tot) + cc.e_t,
        }
    return found


def atomic_result(
    *,
    mol: Any,
    mf: Any,
    cc: Any,
    method: str,
    basis: str,
    scf_cycles: int | None,
    extras: dict[str, Any],
    given: dict[str, Any] | None,
    error: str | None,
) -> dict[str, Any]:
    """The job's ``AtomicResult`` (version 1), validated, as plain JSON data. ``given`` is the
    AtomicInput the job came from, if any: its id, molecule and keywords are kept."""
    from qcelemental.models import v1

    from tilecc import _core

    given = given or {}
    result = v1.AtomicResult(
        id=given.get("id"),
        molecule=given.get("molecule") or molecule_of(mol),
        driver="energy",
        model={"method": method, "basis": basis},
        keywords=given.get("keywords", {}),
        properties=properties(mol, mf, cc, method, scf_cycles),
        return_result=float(cc.e_tot) + (cc.e_t or 0.0),
        success=error is None,
        error=None
        if error is None
        else {"error_type": "convergence_error", "error_message": error},
        provenance={"creator": "tilecc", "version": _core.version(), "routine": "tilecc.run"},
        extras=extras,
    )
    return dict(json.loads(result.serialize("json")))
