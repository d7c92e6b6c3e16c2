"""Molecules from XYZ files, as PySCF Moles: basis sets by name or from NWChem-format files,
effective core potentials where the basis set has them, Cartesian functions and point groups.

Every mistake in the input ends in one ValueError sentence that says what is wrong and where.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.files import read_text_input

#: An XYZ file larger than this is not a molecule tilecc could treat (a million atoms).
MAX_XYZ_BYTES = 64 << 20
#: The point groups tilecc's blocks can use: D2h and its subgroups (irrep products by XOR).
POINT_GROUPS = ("D2h", "C2h", "C2v", "D2", "Cs", "Ci", "C2", "C1")
#: Linear molecules' groups, whose D2h-subgroup each is run in (as Psi4 and NWChem do): PySCF's
#: own treatment of them does not converge open shells such as OH's 2Pi state.
_LINEAR_SUBGROUP = {"Dooh": "D2h", "Coov": "C2v"}


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
    lines = _lines(p)
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
    if len(body) == count - 1 and len(lines) > 1 and _looks_like_atom(lines[1]):
        raise ValueError(
            f"{p}, line 2: an XYZ file's second line is a comment (it may be empty), but this "
            f"one is an atom; insert a comment line after the atom count."
        )
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


def _looks_like_atom(line: str) -> bool:
    fields = line.split()
    if len(fields) < 4 or _nuclear_charge(fields[0]) is None:
        return False
    try:
        [float(f) for f in fields[1:4]]
    except ValueError:
        return False
    return True


def read_charge_and_multiplicity(path: str | Path) -> tuple[int | None, int | None]:
    """The charge and spin multiplicity an XYZ file's comment line (line 2) gives, ORCA style
    (``0 1``) or as extended-XYZ keys (``charge=1 multiplicity=2``); None for what it does not
    give. A comment line that is just text gives neither.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".xyz", delete=False)
    >>> _ = f.write("1\\ncharge=0 multiplicity=2\\nH 0 0 0\\n"); f.close()
    >>> read_charge_and_multiplicity(f.name)
    (0, 2)
    >>> os.unlink(f.name)
    """
    p = Path(path)
    lines = _lines(p)
    comment = lines[1].strip() if len(lines) > 1 else ""
    fields = comment.split()
    charge: int | None
    multiplicity: int | None
    if len(fields) == 2 and all(re.fullmatch(r"[+-]?\d+", f) for f in fields):
        charge, multiplicity = int(fields[0]), int(fields[1])
    else:
        keys = {k.lower(): v for k, v in re.findall(r"(\w+)\s*=\s*(\S+)", comment)}
        charge = _integer_key(p, keys, "charge")
        multiplicity = _integer_key(p, keys, "multiplicity", "mult")
    if multiplicity is not None and multiplicity < 1:
        raise ValueError(
            f"{p}, line 2: the spin multiplicity must be at least 1, got {multiplicity}."
        )
    return charge, multiplicity


def _integer_key(p: Path, keys: dict[str, str], *names: str) -> int | None:
    for name in names:
        if name in keys:
            try:
                return int(keys[name])
            except ValueError:
                raise ValueError(
                    f"{p}, line 2: {name} must be a whole number, found {keys[name]!r}."
                ) from None
    return None


def _lines(p: Path) -> list[str]:
    return read_text_input(p, "molecule file", limit=MAX_XYZ_BYTES).splitlines()


def build_molecule(
    atoms: list[tuple[str, float, float, float]],
    *,
    basis: str,
    charge: int = 0,
    spin: int = 0,
    symmetry: bool = True,
    point_group: str | None = None,
    cartesian: bool = False,
    unit: str = "angstrom",
) -> Any:
    """A PySCF Mole; ``spin`` is 2S = N_alpha - N_beta, as in PySCF. ``basis`` names a basis
    set known to PySCF or an NWChem-format basis file; the basis set's effective core
    potentials, where it has them (def2-*, LANL2DZ, cc-pVnZ-PP), are applied. Without
    ``point_group`` the molecule's largest D2h subgroup is used."""
    from pyscf import gto

    symbols = sorted({_element(s) for s, *_ in atoms})
    basis_spec, ecp = resolve_basis(basis, symbols)
    group = _point_group(point_group, symmetry)
    mol = gto.Mole()
    mol.atom = [(s, (x, y, z)) for s, x, y, z in atoms]
    mol.basis, mol.ecp, mol.cart = basis_spec, ecp, cartesian
    mol.charge, mol.spin, mol.symmetry, mol.unit = charge, spin, group, unit
    mol.verbose = 0
    electrons = sum(_nuclear_charge(s) or 0 for s, *_ in atoms) - charge
    if electrons <= 0:
        raise ValueError(f"charge {charge} leaves {electrons} electrons; give a smaller charge.")
    if (electrons - spin) % 2 or spin > electrons or spin < 0:
        parity = "even" if electrons % 2 == 0 else "odd"
        raise ValueError(
            f"{electrons} electrons cannot have 2S = {spin} (multiplicity {spin + 1}): with an "
            f"{parity} number of electrons 2S must be {parity} and between 0 and "
            f"{electrons}; check --charge and --spin."
        )
    _refuse_coincident_atoms(atoms, unit)
    _build(mol, basis, point_group)
    if point_group is None and mol.symmetry and mol.groupname in _LINEAR_SUBGROUP:
        mol.symmetry = _LINEAR_SUBGROUP[mol.groupname]
        _build(mol, basis, mol.symmetry)
    if mol.nao <= max(mol.nelec):
        raise ValueError(
            f"{mol.nelectron} electrons in {mol.nao} orbitals of basis {basis!r} leave no virtual "
            f"orbital to correlate into; use a larger basis set."
        )
    return mol


#: Atoms closer than this (bohr) are a mistake in the input, not a molecule.
MIN_DISTANCE_BOHR = 0.1


def _refuse_coincident_atoms(atoms: list[tuple[str, float, float, float]], unit: str) -> None:
    """Atom pairs closer than MIN_DISTANCE_BOHR, named by their place in the file."""
    from pyscf.data.nist import BOHR

    xyz = np.array([a[1:] for a in atoms], dtype=float)
    if unit == "angstrom":
        xyz = xyz / BOHR
    distances = np.linalg.norm(xyz[:, None, :] - xyz[None, :, :], axis=-1)
    np.fill_diagonal(distances, np.inf)
    i, j = np.unravel_index(int(np.argmin(distances)), distances.shape)
    if distances[i, j] < MIN_DISTANCE_BOHR:
        first, second = sorted((int(i), int(j)))
        raise ValueError(
            f"atoms {first + 1} ({atoms[first][0]}) and {second + 1} ({atoms[second][0]}) are "
            f"{distances[i, j]:.3g} bohr apart; two atoms cannot coincide, check the coordinates."
        )


def _build(mol: Any, basis: str, point_group: str | None) -> None:
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            mol.build()
    except Exception as exc:  # PySCF raises several types for these mistakes
        text = f"{type(exc).__name__} {exc}".lower()
        if point_group is not None and ("symmetry" in text or "group" in text):
            full = _full_point_group(mol)
            raise ValueError(
                f"the molecule does not have point group {point_group}: its largest D2h "
                f"subgroup is {full}; give --point-group {full} or one of its subgroups."
            ) from None
        if "basis" in text:
            raise ValueError(
                f"basis {basis!r} is not known to PySCF for these elements; check "
                f"its name (e.g. cc-pvdz, 6-31g*, def2-svp) or give an NWChem-format basis file."
            ) from None
        if "atoms" in text and "close" in text:
            raise ValueError(f"two atoms are too close together: {exc}") from None
        reason = str(exc) or type(exc).__name__
        raise ValueError(f"PySCF could not build the molecule: {reason}") from None


def _full_point_group(mol: Any) -> str:
    """The molecule's largest D2h subgroup, for a message."""
    probe = mol.copy()
    probe.symmetry, probe.verbose = True, 0
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            probe.build()
    except Exception:  # the message is about the user's group; this is a hint only
        return "C1"
    return _LINEAR_SUBGROUP.get(probe.groupname, str(probe.groupname))


def _point_group(point_group: str | None, symmetry: bool) -> bool | str:
    """PySCF's ``symmetry`` for a requested point group (canonical capitalisation)."""
    if point_group is None:
        return symmetry
    names = {g.lower(): g for g in POINT_GROUPS}
    if point_group.lower() not in names:
        raise ValueError(
            f"unknown point group {point_group!r}; tilecc uses D2h and its subgroups: "
            f"{', '.join(POINT_GROUPS)}."
        )
    if not symmetry:
        raise ValueError(
            "--point-group and --no-symmetry contradict each other; give one of them "
            "(--point-group C1 also turns symmetry off)."
        )
    return names[point_group.lower()]


def resolve_basis(basis: str, symbols: list[str]) -> tuple[Any, dict[str, str]]:
    """PySCF's ``basis`` and ``ecp`` for these elements: a basis set's name, with its effective
    core potential on each element it has one for, or the per-element shells of an
    NWChem-format basis file."""
    from pyscf.gto import basis as pyscf_basis

    if not basis.strip():
        raise ValueError(
            "--basis is empty; name a basis set (e.g. cc-pvdz) or an NWChem-format basis file."
        )
    path = Path(basis)
    if path.is_file():
        return read_nwchem_basis(path, symbols), {}
    missing = []
    for symbol in symbols:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pyscf_basis.load(basis, symbol)
        except Exception:  # PySCF raises several types for a name or element it lacks
            missing.append(symbol)
    if missing == symbols and pyscf_basis._format_basis_name(basis) not in pyscf_basis.ALIAS:
        raise ValueError(
            f"basis {basis!r} is not known to PySCF; check its name (e.g. cc-pvdz, 6-31g*, "
            f"def2-svp) or give the path of an NWChem-format basis file."
        )
    if missing:
        raise ValueError(
            f"basis {basis!r} has no functions for {', '.join(missing)}; choose a basis set that "
            f"covers every element of the molecule."
        )
    ecp = {}
    for symbol in symbols:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if pyscf_basis.load_ecp(basis, symbol):
                    ecp[symbol] = basis
        except Exception:  # no ECP data for this name or element
            continue
    return basis, ecp


def read_nwchem_basis(path: Path, symbols: list[str]) -> dict[str, Any]:
    """Each element's shells from an NWChem-format basis file (``BASIS ... END`` blocks, or
    just the shells), so that every atom gets its own element's shells only."""
    from pyscf import gto

    text = read_text_input(path, "basis file")
    shells: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_ecp = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word = line.split()[0].upper()
        if word in ("BASIS", "END"):
            current, in_ecp = None, False
            continue
        if word == "ECP":
            raise ValueError(
                f"{path}, line {number}: ECP sections in basis files are not read; give the "
                f"ECP basis set by name (e.g. def2-svp)."
            )
        if in_ecp:
            continue
        fields = line.split()
        if fields[0][0].isalpha():
            if len(fields) != 2 or not fields[1].isalpha():
                raise ValueError(
                    f"{path}, line {number}: expected 'ELEMENT SHELL' (e.g. 'H S'), found {line!r}."
                )
            current = shells.setdefault(_element(fields[0]), [])
            current.append(line)
        elif current is None:
            raise ValueError(
                f"{path}, line {number}: numbers before any 'ELEMENT SHELL' line; this is not "
                f"an NWChem-format basis file."
            )
        else:
            try:
                [float(f.replace("D", "E").replace("d", "e")) for f in fields]
            except ValueError:
                raise ValueError(
                    f"{path}, line {number}: expected an exponent and coefficients, found {line!r}."
                ) from None
            current.append(line)
    missing = [s for s in symbols if s not in shells]
    if missing:
        raise ValueError(
            f"the basis file {path} has no shells for {', '.join(missing)}; add them or "
            f"name a basis set instead."
        )
    out = {}
    for symbol in symbols:
        try:
            out[symbol] = gto.basis.parse("\n".join(shells[symbol]))
        except Exception as exc:
            raise ValueError(
                f"the basis file {path} cannot be parsed for {symbol}: {exc}."
            ) from None
    return out


def _element(label: str) -> str:
    """The element of an atom label ("H1", "h" -> "H")."""
    from pyscf.data import elements

    return str(elements._std_symbol_without_ghost(label))


def _nuclear_charge(symbol: str) -> int | None:
    """The element's nuclear charge (labels such as "H1" allowed), None if it is no element."""
    from pyscf.data import elements

    try:
        charge = int(elements.charge(symbol))
    except (KeyError, ValueError):
        return None
    return charge if charge > 0 else None


def limit_memory(mol: Any, budget_bytes: int) -> None:
    """Hold PySCF's own arrays (the SCF's AO integrals, its integral transformations) to a
    memory budget: it may take the budget beyond what the process holds now, and goes
    integral-direct or out of core past it (PySCF's max_memory is the whole process's, in MB)."""
    from tilecc.memory import resident_bytes

    mol.max_memory = (resident_bytes() + budget_bytes) / 2**20
