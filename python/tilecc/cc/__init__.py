"""Coupled-cluster methods written in tilecc's expression API.

``CCSD(mf)`` takes the spin-adapted closed-shell path (:class:`RCCSD`) for RHF references and
the spin-orbital one (:class:`GCCSD`) for UHF and ROHF; ``CCD`` and ``CCSD_T`` are spin-orbital
for every reference (a closed-shell (T) is planned); ``DRCCD`` is closed-shell only.
"""

from typing import Any

from tilecc.cc.drccd import DRCCD
from tilecc.cc.gccsd import GCCD, GCCSD
from tilecc.cc.rccsd import RCCSD
from tilecc.cc.solver import AmplitudeSolver, IterationRecord

CCD = GCCD


def CCSD(mf: Any, **options: Any) -> AmplitudeSolver:
    """The CCSD solver for this reference: RCCSD for RHF, GCCSD (spin orbitals) otherwise."""
    from pyscf import scf

    closed_shell = isinstance(mf, scf.hf.RHF) and not isinstance(mf, scf.rohf.ROHF)
    return RCCSD(mf, **options) if closed_shell else GCCSD(mf, **options)


class CCSD_T(GCCSD):  # noqa: N801  (the name chemists know, as in the issue and PySCF)
    """CCSD followed by its (T) correction: ``CCSD_T(mf).run().e_tot`` includes ``e_t``."""

    def run(self) -> "CCSD_T":
        super().run()
        if self.converged:
            self.ccsd_t()
        return self


__all__ = [
    "CCD",
    "CCSD",
    "CCSD_T",
    "DRCCD",
    "GCCD",
    "GCCSD",
    "RCCSD",
    "AmplitudeSolver",
    "IterationRecord",
]
