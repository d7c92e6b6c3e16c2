"""drCCD against an independent NumPy implementation of the same equations, in the test."""

from __future__ import annotations

import numpy as np
import pytest
from pyscf import ao2mo, gto, scf

import tilecc.cc

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"


def numpy_drccd(mf, frozen: int) -> float:
    nocc = int(np.count_nonzero(mf.mo_occ))
    co, cv = mf.mo_coeff[:, frozen:nocc], mf.mo_coeff[:, nocc:]
    no, nv = co.shape[1], cv.shape[1]
    v = ao2mo.general(mf.mol, (co, cv, co, cv), compact=False).reshape(no, nv, no, nv)
    eo, ev = mf.mo_energy[frozen:nocc], mf.mo_energy[nocc:]
    d = (
        eo[:, None, None, None]
        - ev[None, :, None, None]
        + eo[None, None, :, None]
        - ev[None, None, None, :]
    )
    t = v / d
    for _ in range(500):
        new = (
            v
            + 2 * np.einsum("iakc,kcjb->iajb", v, t)
            + 2 * np.einsum("iakc,kcjb->iajb", t, v)
            + 4 * np.einsum("iakc,kcld,ldjb->iajb", t, v, t, optimize=True)
        ) / d
        if np.abs(new - t).max() < 1e-13:
            break
        t = 0.5 * t + 0.5 * new  # damped: plain iteration of drCCD can oscillate
    return float(2 * np.einsum("iajb,iajb", v, new))


@pytest.mark.parametrize(
    ("symmetry", "tile", "threads"), [(True, 1, 1), (True, 4, 2), (False, 24, 2)]
)
def test_water(symmetry, tile, threads):
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=symmetry, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    mine = tilecc.cc.DRCCD(
        mf, frozen=1, tile=tile, threads=threads, conv_tol=1e-12, conv_tol_normt=1e-10
    ).run()
    assert mine.converged
    assert mine.e_corr == pytest.approx(numpy_drccd(mf, 1), abs=1e-9)


def test_open_shell_refused():
    mol = gto.M(atom="O 0 0 0; H 0 0 0.97", basis="sto-3g", spin=1, verbose=0)
    mf = scf.UHF(mol).run()
    with pytest.raises(ValueError, match="closed-shell RHF reference"):
        tilecc.cc.DRCCD(mf).run()
