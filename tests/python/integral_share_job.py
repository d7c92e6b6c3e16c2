"""Run under mpiexec by test_mpi.py: each rank transforms a share of the integral batches; the
tensors hold PySCF's integrals on every rank. Rank 0 prints each rank's transformed elements and
the largest error, as JSON."""

from __future__ import annotations

import json

import tilecc  # noqa: F401  (first: it quiets UCX before MPI loads)

# isort: split
import numpy as np
from mpi4py import MPI
from pyscf import ao2mo, gto, scf

from tilecc import Context, mpi
from tilecc.host import integrals
from tilecc.host.pyscf import _SPATIAL_SYMMETRY, restricted_problem

transformed: list[int] = []
real = integrals.transform


def transform(mf, coefficients, ao=None):
    array = real(mf, coefficients, ao)
    transformed.append(int(array.size))
    return array


integrals.transform = transform
mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="6-31g", verbose=0)
mf = scf.RHF(mol).run()
mpi.share_mean_field(mf)
problem = restricted_problem(
    mf, tile=2, context=Context(threads=1), classes=tuple(_SPATIAL_SYMMETRY)
)
nocc = int(np.count_nonzero(mf.mo_occ))
natural = {"o": np.arange(nocc), "v": np.arange(nocc, mf.mo_coeff.shape[1])}
coeff = {
    x: mf.mo_coeff[:, natural[x][np.array(space.order)]]
    for x, space in (("o", problem.occ), ("v", problem.vir))
}
error = 0.0
for name, t in problem.eri.items():
    chosen = tuple(coeff[x] for x in name)
    expected = ao2mo.incore.general(mf._eri, chosen, compact=False).reshape(t.shape)
    error = max(error, float(np.abs(t.to_dense() - expected).max()))
whole = real(mf, (np.hstack([coeff["o"], coeff["v"]]),) * 4).size
shares = MPI.COMM_WORLD.gather(sum(transformed), root=0)
errors = MPI.COMM_WORLD.gather(error, root=0)
if MPI.COMM_WORLD.Get_rank() == 0:
    print(json.dumps({"transformed": shares, "whole": int(whole), "error": max(errors)}))
