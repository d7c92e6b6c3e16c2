"""Open-shell CCSD(T): the hydroxyl radical on a UHF reference, with the diagnostics a chemist
checks before trusting a single-reference result (T1, the largest amplitudes, ⟨S²⟩).

Run: .venv/bin/python examples/30-uhf_ccsd_t.py
"""

from pyscf import gto, scf

import tilecc
from tilecc.cc import diagnostics

# PySCF converges open-shell linear molecules in an abelian subgroup: C2v here.
mol = gto.M(atom="O 0 0 0; H 0 0 0.97", basis="cc-pvdz", spin=1, symmetry="C2v", verbose=0)
mf = scf.UHF(mol).run()
cc = tilecc.CCSD(mf, frozen=1).run()
e_t = cc.ccsd_t()
print(f"UHF-CCSD(T) total energy = {cc.e_tot + e_t:.10f} Eh")
for line in diagnostics.lines(diagnostics.diagnostics(cc.t1, cc.t2, mf)):
    print(line)
