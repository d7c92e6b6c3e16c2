"""Coupled-cluster methods written in tilecc's expression API.

``CCSD(mf)`` and ``CCSD_T(mf)`` take the spin-adapted closed-shell path (:class:`RCCSD`, with
its closed-shell (T)) for RHF references and the spin-orbital one (:class:`GCCSD`) for UHF and
ROHF; ``CCD`` is spin-orbital for every reference; ``DRCCD`` is closed-shell only.
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
    if closed_shell:
        options.pop("semicanonical", None)  # RHF orbitals are canonical already
        return RCCSD(mf, **options)
    return GCCSD(mf, **options)


def CCSD_T(mf: Any, **options: Any) -> AmplitudeSolver:
    """CCSD followed by its (T) correction: ``CCSD_T(mf).run()`` has ``e_t`` and the total
    ``e_tot_ccsd_t`` (``e_tot`` stays the CCSD total, as in PySCF)."""
    return CCSD(mf, with_t=True, **options)


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
