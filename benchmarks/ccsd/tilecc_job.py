"""Competitor: tilecc, whole CCSD(T) job (SCF, CCSD, (T)) in this process; prints JSON."""

from __future__ import annotations

import json
import sys
import time

from pyscf import gto, scf

import tilecc


def main() -> None:
    basis, xyz, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = time.perf_counter()
    mol = gto.M(atom=xyz, basis=basis, symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-9)
    t_scf = time.perf_counter()
    cc = tilecc.CCSD(mf, threads=threads).run()
    t_ccsd = time.perf_counter()
    e_t = cc.ccsd_t()
    t_end = time.perf_counter()
    print(
        json.dumps(
            {
                "e_tot": cc.e_tot,
                "e_t": e_t,
                "scf_s": t_scf - start,
                "ccsd_s": t_ccsd - t_scf,
                "t_s": t_end - t_ccsd,
                "total_s": t_end - start,
            }
        )
    )


if __name__ == "__main__":
    main()
