"""Closed-shell CCSD(T) from Python, shaped like PySCF: water in cc-pVDZ, frozen core.

Run: .venv/bin/python examples/20-rhf_ccsd_t.py
"""

from pyscf import gto, scf

import tilecc

mol = gto.M(
    atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692",
    basis="cc-pvdz",
    symmetry=True,
    verbose=0,
)
mf = scf.RHF(mol).run()
cc = tilecc.CCSD(mf, frozen=1).run()  # every available core; threads=N to choose
e_t = cc.ccsd_t()
print(f"CCSD converged in {cc.cycles} iterations: E(corr) = {cc.e_corr:.10f} Eh")
print(f"(T) = {e_t:.10f} Eh, CCSD(T) total energy = {cc.e_tot + e_t:.10f} Eh")
