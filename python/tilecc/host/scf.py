"""Mean-field references that converge where other programs' do: DIIS first, a second-order
(Newton) solver when DIIS stalls, and a stability analysis that the result is a minimum.

PySCF's DIIS oscillates on some open shells (the CN radical's UHF, for one) where its
second-order solver, started from DIIS's last orbitals, converges in a few steps; the strategy
that converged is reported, as is each rotation out of an unstable solution.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REFERENCES = ("rhf", "uhf", "rohf")
#: PySCF's initial guesses that need nothing but the molecule.
GUESSES = ("minao", "atom", "huckel", "1e", "vsap")
#: How many times an unstable solution is rotated along its instability and converged again.
STABILITY_ROUNDS = 3


@dataclass
class SCFOptions:
    """The SCF controls chemists set (Psi4's e_convergence / maxiter / guess, PySCF's names)."""

    conv_tol: float = 1e-10
    max_cycle: int = 100
    guess: str = "minao"
    #: Start from the orbitals in this PySCF chkfile (a converged one needs one or two cycles).
    chkfile: Path | None = None
    #: Check that the solution is a minimum, and leave a saddle point when it is not.
    stability: bool = True

    def validate(self) -> None:
        if not self.conv_tol > 0 or self.conv_tol != self.conv_tol:
            raise ValueError(f"--scf-conv must be a positive number, got {self.conv_tol}.")
        if self.max_cycle < 1:
            raise ValueError(f"--scf-max-iter must be at least 1, got {self.max_cycle}.")
        if self.guess not in GUESSES:
            raise ValueError(
                f"unknown SCF guess {self.guess!r}; choose one of {', '.join(GUESSES)}."
            )
        if self.chkfile is not None and not Path(self.chkfile).is_file():
            raise ValueError(
                f"cannot read the SCF chkfile {self.chkfile}: no such file; give the path of a "
                f"PySCF chkfile (mf.chkfile)."
            )


@dataclass
class SCFReport:
    """How the reference was converged, for the log and the JSON results."""

    strategy: str = "DIIS"
    cycles: int = 0
    stable: bool | None = None
    notes: list[str] = field(default_factory=list)


def run_scf(mol: Any, reference: str, options: SCFOptions | None = None) -> tuple[Any, SCFReport]:
    """Converge an RHF, UHF or ROHF reference; a closed-shell RHF needs 2S = 0."""
    opts = options or SCFOptions()
    opts.validate()
    if reference not in REFERENCES:
        raise ValueError(f"unknown reference {reference!r}; use one of {', '.join(REFERENCES)}.")
    if reference == "rhf" and mol.spin != 0:
        raise ValueError(
            f"RHF describes closed shells only, but 2S = {mol.spin}; use --reference uhf or rohf."
        )
    mf = mean_field(mol, reference)
    mf.conv_tol, mf.max_cycle, mf.init_guess = opts.conv_tol, opts.max_cycle, opts.guess
    # PySCF writes a chkfile of its own by default; tilecc keeps what it needs in its checkpoint.
    mf.chkfile = None
    report = SCFReport()
    dm0 = _chkfile_density(mf, opts.chkfile) if opts.chkfile is not None else None
    mf = _converge(mf, dm0, report)
    if opts.stability:
        mf = _stable(mf, report)
    return mf, report


def mean_field(mol: Any, reference: str) -> Any:
    """PySCF's unconverged mean-field object of this reference for ``mol``."""
    from pyscf import scf

    return {"rhf": scf.RHF, "uhf": scf.UHF, "rohf": scf.ROHF}[reference](mol)


def _converge(mf: Any, dm0: Any, report: SCFReport) -> Any:
    """DIIS, then the second-order solver from DIIS's orbitals when DIIS did not converge."""
    cycles = _Counter()
    mf.callback = cycles
    mf.kernel(dm0)
    report.cycles += cycles.count
    if mf.converged:
        return mf
    newton = mf.newton()
    newton.conv_tol, newton.max_cycle = mf.conv_tol, mf.max_cycle
    newton.callback = cycles
    newton.kernel(mf.mo_coeff, mf.mo_occ)
    report.cycles = cycles.count
    if not newton.converged:
        raise ValueError(
            f"the {type(mf).__name__} calculation did not converge in {mf.max_cycle} DIIS "
            f"cycles nor as many second-order ones; check the geometry, charge and spin, or try "
            f"another --scf-guess."
        )
    report.strategy = "second-order (Newton) after DIIS stalled"
    return newton


def _stable(mf: Any, report: SCFReport) -> Any:
    """Rotate out of an internal instability until the solution is a minimum (at most
    STABILITY_ROUNDS times); ROHF has no analysis of its own in PySCF and is left as it is."""
    from pyscf import scf

    if isinstance(mf, scf.rohf.ROHF):
        return mf
    for _ in range(STABILITY_ROUNDS):
        with contextlib.redirect_stdout(io.StringIO()):
            mo, _, stable, _ = mf.stability(return_status=True)
        report.stable = bool(stable)
        if stable:
            return mf
        energy = float(mf.e_tot)
        rotated = mf.newton()
        rotated.conv_tol, rotated.max_cycle = mf.conv_tol, mf.max_cycle
        rotated.kernel(mo, mf.mo_occ)
        if not rotated.converged or rotated.e_tot > energy - 1e-10:
            report.notes.append("an instability was found but no lower solution along it")
            return mf
        report.notes.append(
            f"unstable solution at {energy:.10f} Eh left for {rotated.e_tot:.10f} Eh"
        )
        mf = rotated
    return mf


def _chkfile_density(mf: Any, path: Path) -> Any:
    """The density of the orbitals in a PySCF chkfile, projected onto this basis."""
    try:
        return mf.from_chk(os.fspath(path))
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        raise ValueError(
            f"cannot read the SCF chkfile {path}: it is not a PySCF chkfile ({exc})."
        ) from None


class _Counter:
    """An SCF callback that counts cycles and logs each one's energy, change and orbital
    gradient (at INFO: shown by `tilecc run`, silent in a Python session without logging)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, envs: dict[str, Any]) -> None:
        from tilecc.log import LOGGER

        self.count += 1
        energy, last = float(envs.get("e_tot", math.nan)), envs.get("last_hf_e")
        change = energy - float(last) if last is not None else math.nan
        gradient = envs.get("norm_gorb")
        shown = f"  |g| {float(gradient):.2e}" if gradient is not None else ""
        LOGGER.info(f"  SCF {self.count:3d}  {energy:+.10f}  {change:+.3e}{shown}")
