"""Competitor: PySCF RCCSD(T), whole job in this process; prints JSON."""

from __future__ import annotations

import json
import sys
import time

from pyscf import cc, gto, lib, scf


def main() -> None:
    basis, xyz, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lib.num_threads(threads)
    start = time.perf_counter()
    mol = gto.M(atom=xyz, basis=basis, symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-9)
    t_scf = time.perf_counter()
    mycc = cc.CCSD(mf).set_frozen().run()
    t_ccsd = time.perf_counter()
    e_t = mycc.ccsd_t()
    t_end = time.perf_counter()
    print(
        json.dumps(
            {
                "e_tot": mycc.e_tot + e_t,
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
