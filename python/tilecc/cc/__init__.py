"""Coupled-cluster methods written in tilecc's expression API.

``CCSD``, ``CCD`` and ``CCSD_T`` accept any RHF, UHF or ROHF reference and solve the spin-orbital
equations with spin and point-group blocking (a spin-adapted closed-shell path for RHF is
planned); ``DRCCD`` is closed-shell only.
"""

from tilecc.cc.drccd import DRCCD
from tilecc.cc.gccsd import GCCD, GCCSD

CCSD = GCCSD
CCD = GCCD


class CCSD_T(GCCSD):  # noqa: N801  (the name chemists know, as in the issue and PySCF)
    """CCSD followed by its (T) correction: ``CCSD_T(mf).run().e_tot`` includes ``e_t``."""

    def run(self) -> "CCSD_T":
        super().run()
        if self.converged:
            self.ccsd_t()
        return self


__all__ = ["CCD", "CCSD", "CCSD_T", "DRCCD", "GCCD", "GCCSD"]
