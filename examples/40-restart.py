"""A checkpointed job that stops early and continues where it stopped, as a job killed by a
queue's time limit would: the second run reads the SCF solution, the amplitudes and the DIIS
history from the checkpoint and converges in the iterations that were left.

Run: .venv/bin/python examples/40-restart.py
"""

import tempfile
import warnings
from pathlib import Path

from pyscf import gto, scf

import tilecc

mol = gto.M(atom="N 0 0 0; N 0 0 1.1", basis="cc-pvdz", symmetry=True, verbose=0)
mf = scf.RHF(mol).run()
with tempfile.TemporaryDirectory() as folder:
    checkpoint = Path(folder) / "n2.ckpt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": on purpose
        first = tilecc.CCSD(mf, frozen=2, max_cycle=4, checkpoint=checkpoint).run()
    print(f"stopped after {first.cycles} iterations, converged: {first.converged}")
    second = tilecc.CCSD(mf, frozen=2, checkpoint=checkpoint, restart=True).run()
    print(f"continued to iteration {second.cycles}, converged: {second.converged}")
    print(f"CCSD total energy = {second.e_tot:.10f} Eh")
