"""One distributed CCSD job for benchmarks/mpi/run.py: N2/cc-pVTZ (D2h), frozen core, two CCSD
iterations on every rank of the launcher; rank 0 prints one JSON line: the second iteration's
time (the first builds the plans), the ranks' traffic and peak memory, counter fetches per task.

    mpiexec -n R python job.py POLICY
"""

from __future__ import annotations

import json
import resource
import sys
import warnings

from pyscf import gto, scf

import tilecc
from tilecc import mpi
from tilecc.host.pyscf import chemical_core
from tilecc.run import communication


def main() -> None:
    policy = sys.argv[1]
    mol = gto.M(atom="N 0 0 0; N 0 0 1.0977", basis="cc-pvtz", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    seconds: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # two iterations do not converge
        cc = tilecc.CCSD(
            mf,
            frozen=chemical_core(mol),
            threads=1,
            policy=policy,
            max_cycle=2,
            callback=lambda record: seconds.append(record.seconds),
        ).run()
    stats = cc.context.stats
    mine = {
        "communication": communication(cc.context),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tensor_mb": cc.context.runtime.memory["high_water_bytes"] / 2**20,
        "tasks": stats.tasks,
    }
    ranks = mpi.gather(mine)
    if mpi.world().leader:
        keys = ranks[0]["communication"]
        total = {k: sum(r["communication"][k] for r in ranks) for k in keys}
        print(
            json.dumps(
                {
                    "iteration_s": seconds[-1],
                    "communication": total,
                    "counter_calls_per_task": total["counter_calls"] / max(1, ranks[0]["tasks"]),
                    "peak_rss_mb_per_rank": [r["peak_rss_mb"] for r in ranks],
                    "tensor_mb_per_rank": [r["tensor_mb"] for r in ranks],
                }
            )
        )


if __name__ == "__main__":
    main()
