"""Where the time of a CCSD job went: a traced run, its time decomposition (compute, permute,
scheduling, idle, inspector) per contraction, and a Chrome/Perfetto trace to open in
ui.perfetto.dev (one row per worker, and the job's SCF, integrals, iterations).

Run: .venv/bin/python examples/50-trace.py [TRACE.json.gz]
"""

import sys

from pyscf import gto, scf

import tilecc

mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="cc-pvdz",
            symmetry=True, verbose=0)  # fmt: skip
mf = scf.RHF(mol).run()
cc = tilecc.CCSD(mf, frozen=1, threads=2, policy="counter", trace=True).run()
for record in sorted(cc.context.contractions, key=lambda r: -r.time.total)[:5]:
    print(f"{record.time.total * 1e3:8.2f} ms  {record.expression}")
print(
    "in total, seconds:", {k: round(v, 4) for k, v in cc.context.decomposition().as_dict().items()}
)
if len(sys.argv) > 1:
    cc.context.write_trace(sys.argv[1])
    print(f"trace written to {sys.argv[1]}")
