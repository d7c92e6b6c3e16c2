"""Molecules from XYZ files, and their mean-field references, through PySCF.

Every mistake in the input ends in one ValueError sentence that says what is wrong and where.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from pathlib import Path
from typing import Any

REFERENCES = ("rhf", "uhf", "rohf")


def read_xyz(path: str | Path) -> list[tuple[str, float, float, float]]:
    """Atoms of an XYZ file: a count line, a comment line, then "symbol x y z" per atom (Å).

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".xyz", delete=False)
    >>> _ = f.write("2\\nhydrogen\\nH 0 0 0\\nH 0 0 0.74\\n"); f.close()
    >>> read_xyz(f.name)
    [('H', 0.0, 0.0, 0.0), ('H', 0.0, 0.0, 0.74)]
    >>> os.unlink(f.name)
    """
    p = Path(path)
    try:
        lines = p.read_text().splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read the molecule file {p}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise ValueError(f"{p} is not a text XYZ file.") from None
    if not lines or not lines[0].strip():
        raise ValueError(f"{p}, line 1: expected the number of atoms, found an empty line.")
    try:
        count = int(lines[0].split()[0])
    except ValueError:
        raise ValueError(
            f"{p}, line 1: expected the number of atoms, found {lines[0].strip()!r}."
        ) from None
    if count < 1:
        raise ValueError(f"{p}, line 1: the number of atoms must be at least 1, got {count}.")
    body = [(n + 1, line) for n, line in enumerate(lines) if n >= 2 and line.strip()]
    if len(body) != count:
        raise ValueError(f"{p}: line 1 announces {count} atoms but the file lists {len(body)}.")
    atoms = []
    for number, line in body:
        fields = line.split()
        if len(fields) < 4:
            raise ValueError(
                f"{p}, line {number}: expected 'symbol x y z', found {line.strip()!r}."
            )
        symbol = fields[0]
        if _nuclear_charge(symbol) is None:
            raise ValueError(f"{p}, line {number}: {symbol!r} is not a chemical element.")
        try:
            x, y, z = (float(v) for v in fields[1:4])
        except ValueError:
            raise ValueError(
                f"{p}, line {number}: coordinates must be numbers, found {' '.join(fields[1:4])!r}."
            ) from None
        if not all(math.isfinite(c) for c in (x, y, z)):
            raise ValueError(f"{p}, line {number}: coordinates must be finite numbers.")
        atoms.append((symbol, x, y, z))
    return atoms


def build_molecule(
    atoms: list[tuple[str, float, float, float]],
    *,
    basis: str,
    charge: int = 0,
    spin: int = 0,
    symmetry: bool = True,
    unit: str = "angstrom",
) -> Any:
    """A PySCF Mole; ``spin`` is 2S = N_alpha - N_beta, as in PySCF."""
    from pyscf import gto

    mol = gto.Mole()
    mol.atom = [(s, (x, y, z)) for s, x, y, z in atoms]
    mol.basis, mol.charge, mol.spin, mol.symmetry, mol.unit = basis, charge, spin, symmetry, unit
    mol.verbose = 0
    electrons = sum(_nuclear_charge(s) or 0 for s, *_ in atoms) - charge
    if electrons <= 0:
        raise ValueError(f"charge {charge} leaves {electrons} electrons; give a smaller charge.")
    if (electrons - spin) % 2 or spin > electrons or spin < 0:
        parity = "even" if electrons % 2 == 0 else "odd"
        raise ValueError(
            f"{electrons} electrons cannot have 2S = {spin}: with an {parity} "
            f"number of electrons 2S must be {parity} and between 0 and "
            f"{electrons}; check --charge and --spin."
        )
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            mol.build()
    except Exception as exc:  # PySCF raises several types for an unknown basis
        if "basis" in type(exc).__name__.lower() or "basis" in str(exc).lower():
            raise ValueError(
                f"basis {basis!r} is not known to PySCF for these elements; check "
                f"its name (e.g. cc-pvdz, 6-31g*, def2-svp)."
            ) from None
        raise ValueError(f"PySCF could not build the molecule: {exc}") from None
    return mol


def _nuclear_charge(symbol: str) -> int | None:
    """The element's nuclear charge (labels such as "H1" allowed), None if it is no element."""
    from pyscf.data import elements

    try:
        charge = int(elements.charge(symbol))
    except (KeyError, ValueError):
        return None
    return charge if charge > 0 else None


def run_scf(mol: Any, reference: str, *, conv_tol: float = 1e-10, max_cycle: int = 100) -> Any:
    """Converge an RHF, UHF or ROHF reference; a closed-shell RHF needs 2S = 0."""
    from pyscf import scf

    if reference not in REFERENCES:
        raise ValueError(f"unknown reference {reference!r}; use one of {', '.join(REFERENCES)}.")
    if reference == "rhf" and mol.spin != 0:
        raise ValueError(
            f"RHF describes closed shells only, but 2S = {mol.spin}; use --reference uhf or rohf."
        )
    kind = {"rhf": scf.RHF, "uhf": scf.UHF, "rohf": scf.ROHF}[reference]
    mf = kind(mol)
    mf.conv_tol, mf.max_cycle = conv_tol, max_cycle
    mf.kernel()
    if not mf.converged:
        raise ValueError(
            f"the {reference.upper()} calculation did not converge in {max_cycle} "
            f"cycles; check the geometry, charge and spin."
        )
    return mf
