"""tilecc driven by QCEngine, as Psi4 or NWChem are: a QCSchema AtomicInput in, a validated
AtomicResult out, with the standard properties and tilecc's own figures under extras.

Run: .venv/bin/python examples/60-qcschema.py   (needs qcengine: pip install "tilecc[qcengine]")
"""

import qcengine
from qcelemental.models import AtomicInput, Molecule

from tilecc.qcengine_harness import register

register()
water = Molecule.from_data("O 0 0 0.1173\nH 0 0.7572 -0.4692\nH 0 -0.7572 -0.4692")
given = AtomicInput(
    molecule=water,
    driver="energy",
    model={"method": "ccsd(t)", "basis": "cc-pvdz"},
    keywords={"frozen_core": True},
)
result = qcengine.compute(given, "tilecc", task_config={"ncores": 2}, raise_error=True)
print(f"CCSD(T) total energy = {result.properties.ccsd_prt_pr_total_energy:.10f} Eh")
print(f"tilecc {result.provenance.version}, {result.extras['iterations']} iterations")
