"""One out-of-core job for benchmarks/ooc/run.py, in a process of its own (so that its peak RSS is
its own); prints one JSON line.

    python job.py ccd SCALE STORE SCHEDULE BUDGET_BYTES THREADS
    python job.py ccsd MOLECULE BASIS STORE SCHEDULE BUDGET_BYTES THREADS

ccd: paper 004's CCD sub-computation (benchmarks/paper004.py), its segments scaled by SCALE;
the two contractions are timed, from their inputs on disk to their outputs written back; the
job's peak resident memory is measured from the process as it stood before the tensors.

ccsd: a frozen-core RHF-CCSD job (SCF outside the timing), with the process's resident memory
after the SCF and the job's peak from there.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

import tilecc
from tilecc.memory import peak_rss_bytes, resident_bytes

sys.path.insert(0, str(Path(__file__).parents[1]))
from paper004 import ccd_tensors


def reset_peak_rss() -> int:
    """Start counting the process's peak resident memory again from now (Linux's VmHWM, reset
    through /proc/self/clear_refs); returns what it holds now."""
    Path("/proc/self/clear_refs").write_text("5")
    return resident_bytes()


def peak_rss_since_reset() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def ccd(scale: float, ctx: tilecc.Context) -> dict:
    process = reset_peak_rss()
    # Tiles of half a segment (the paper's bricks): blocks of at least 64 KiB at scale 0.5.
    x = ccd_tensors(ctx, scale, max(1, round(20 * scale)), max(1, round(50 * scale)))
    x.initialise()
    x.i1.context.settle(x.i1)
    ctx.runtime.flush_scratch()  # the contractions' inputs start on disk, as the paper's do
    before = ctx.io
    start = time.perf_counter()
    x.contract()
    x.i0.context.settle(x.i0)
    ctx.runtime.flush_scratch()  # what is still changed in memory is written out
    seconds = time.perf_counter() - start
    after = ctx.io
    return {
        "process_bytes": process,
        "job_peak_rss_bytes": peak_rss_since_reset(),
        "seconds": seconds,
        "bytes_read": after["bytes_read"] - before["bytes_read"],
        "bytes_written": after["bytes_written"] - before["bytes_written"],
        "lower_bound_bytes": after["lower_bound_bytes"] - before["lower_bound_bytes"],
        "arrays_bytes": x.stored_bytes,
        "checksum": float(np.sqrt(x.i0.dot(x.i0))),
    }


def ccsd(molecule: str, basis: str, ctx_options: dict) -> dict:
    from pyscf import gto, scf

    from tilecc.host.pyscf import chemical_core

    mol = gto.M(atom=molecule, basis=basis, symmetry=True, verbose=0)
    mf = scf.RHF(mol).run()
    # The budget is for what the job allocates: its peak is measured from the process as the
    # SCF left it, whose own peak (PySCF's buffers) is not the job's.
    process = reset_peak_rss()
    start = time.perf_counter()
    cc = tilecc.CCSD(mf, frozen=chemical_core(mol), **ctx_options).run()
    io = cc.context.io
    return {
        "process_bytes": process,
        "job_peak_rss_bytes": peak_rss_since_reset(),
        "seconds": time.perf_counter() - start,
        "iteration_seconds": cc.iteration_seconds,
        "e_corr": cc.e_corr,
        "bytes_read": io["bytes_read"],
        "bytes_written": io["bytes_written"],
        "lower_bound_bytes": io["lower_bound_bytes"],
        "tensor_high_water_bytes": cc.context.runtime.memory["high_water_bytes"],
    }


def main() -> None:
    workload = sys.argv[1]
    store, schedule = sys.argv[-4], sys.argv[-3]
    budget, threads = int(sys.argv[-2]), int(sys.argv[-1])
    options = {"threads": threads, "store": store, "staging": schedule}
    if budget:
        options["memory_budget"] = budget
    if workload == "ccd":
        result = ccd(float(sys.argv[2]), tilecc.Context(**options))
    else:
        result = ccsd(sys.argv[2], sys.argv[3], options)
    result["peak_rss_bytes"] = peak_rss_bytes()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
