"""One distributed job for benchmarks/mpi/run.py, on every rank of the launcher: two CCSD
iterations of N2/cc-pVTZ (D2h, frozen core), or twice paper 004's CCD sub-computation
(benchmarks/paper004.py, its segments scaled by 0.35); rank 0 prints one JSON line: the second
run's time (the first builds the plans), the ranks' traffic and peak memory, counter fetches per
task.

    mpiexec -n R python job.py ccsd|ccd POLICY THREADS
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

from pyscf import gto, scf

import tilecc
from tilecc import mpi
from tilecc.host.pyscf import chemical_core
from tilecc.memory import peak_rss_bytes
from tilecc.run import communication

sys.path.insert(0, str(Path(__file__).parents[1]))
from paper004 import ccd_tensors


def ccd(policy: str, threads: int) -> tuple[tilecc.Context, float]:
    ctx = tilecc.Context(threads=threads, policy=policy)
    x = ccd_tensors(ctx, 0.35, 7, 18)
    seconds = 0.0
    for _ in range(2):
        x.initialise()
        x.i1.context.settle(x.i1)
        start = time.perf_counter()
        x.contract()
        x.i0.context.settle(x.i0)
        seconds = time.perf_counter() - start
    return ctx, seconds


def ccsd(policy: str, threads: int) -> tuple[tilecc.Context, float]:
    mol = gto.M(atom="N 0 0 0; N 0 0 1.0977", basis="cc-pvtz", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    seconds: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # two iterations do not converge
        cc = tilecc.CCSD(
            mf,
            frozen=chemical_core(mol),
            threads=threads,
            policy=policy,
            max_cycle=2,
            callback=lambda record: seconds.append(record.seconds),
        ).run()
    return cc.context, seconds[-1]


def main() -> None:
    workload, policy, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ctx, seconds = (ccd if workload == "ccd" else ccsd)(policy, threads)
    stats = ctx.stats
    mine = {
        "communication": communication(ctx),
        "peak_rss_mb": peak_rss_bytes() / 2**20,
        "tensor_mb": ctx.runtime.memory["high_water_bytes"] / 2**20,
        "tasks": stats.tasks,
    }
    ranks = mpi.gather(mine)
    if mpi.world().leader:
        keys = ranks[0]["communication"]
        total = {k: sum(r["communication"][k] for r in ranks) for k in keys}
        print(
            json.dumps(
                {
                    "iteration_s": seconds,
                    "communication": total,
                    "counter_calls_per_task": total["counter_calls"] / max(1, ranks[0]["tasks"]),
                    "peak_rss_mb_per_rank": [r["peak_rss_mb"] for r in ranks],
                    "tensor_mb_per_rank": [r["tensor_mb"] for r in ranks],
                }
            )
        )


if __name__ == "__main__":
    main()
