"""One out-of-core job for benchmarks/ooc/run.py, in a process of its own (so that its peak RSS is
its own); prints one JSON line.

    python job.py ccd SCALE STORE SCHEDULE BUDGET_BYTES THREADS
    python job.py ccsd MOLECULE BASIS STORE SCHEDULE BUDGET_BYTES THREADS

ccd: paper 004's CCD sub-computation (section 6.4), its segments scaled by SCALE
(1: O in 40, 40, 20, 20 and V in 100, 100, 60, 60, each segment an irrep of D2, as its symmetry
segments):

    i1[h6,p3,h1,p5] += v1[h6,p3,h1,p5]
    i1[h6,p3,h1,p5] += t[p3,p7,h1,h8] * v2[h6,h8,p5,p7]
    i0[p3,p4,h1,h2] += t[p3,p5,h1,h6] * i1[h6,p4,h2,p5]

ccsd: a frozen-core RHF-CCSD job (SCF outside the timing).
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

import tilecc

SEGMENTS = {"o": (40, 40, 20, 20), "v": (100, 100, 60, 60)}


def segment_space(lengths: list[int], tile: int, kind: str, name: str) -> tilecc.Space:
    irreps = [irrep for irrep, n in enumerate(lengths) for _ in range(n)]
    return tilecc.Space(irreps, tile=tile, kind=kind, name=name)


def scaled(space: str, scale: float) -> list[int]:
    return [round(n * scale) for n in SEGMENTS[space]]


def ccd(scale: float, ctx: tilecc.Context) -> dict:
    # Tiles of half a segment (the paper's bricks): blocks of at least 64 KiB at scale 0.5.
    o = segment_space(scaled("o", scale), max(1, round(20 * scale)), "occupied", "o")
    v = segment_space(scaled("v", scale), max(1, round(50 * scale)), "virtual", "v")
    t = tilecc.Tensor([v, v, o, o], name="t", context=ctx)
    v1 = tilecc.Tensor([o, v, o, v], name="v1", context=ctx)
    v2 = tilecc.Tensor([o, o, v, v], name="v2", context=ctx)
    i1 = tilecc.Tensor([o, v, o, v], name="i1", context=ctx)
    i0 = tilecc.Tensor([v, v, o, o], name="i0", context=ctx)
    for seed, x in enumerate((t, v1, v2)):
        x.fill_random_(seed)
    i1["maic"] = v1["maic"]  # the first operation: data parallel, as the paper's
    i1.context.settle(i1)
    ctx.runtime.flush_scratch()  # the contractions' inputs start on disk, as the paper's do
    before = ctx.io
    start = time.perf_counter()
    i1["maic"] += t["adin"] * v2["mncd"]
    i0["abij"] += t["acim"] * i1["mbjc"]
    i0.context.settle(i0)
    ctx.runtime.flush_scratch()  # what is still changed in memory is written out
    seconds = time.perf_counter() - start
    after = ctx.io
    arrays = sum(x.stored_elements for x in (t, v1, v2, i1, i0)) * 8
    return {
        "seconds": seconds,
        "bytes_read": after["bytes_read"] - before["bytes_read"],
        "bytes_written": after["bytes_written"] - before["bytes_written"],
        "lower_bound_bytes": after["lower_bound_bytes"] - before["lower_bound_bytes"],
        "arrays_bytes": arrays,
        "checksum": float(np.sqrt(i0.dot(i0))),
    }


def ccsd(molecule: str, basis: str, ctx_options: dict) -> dict:
    from pyscf import gto, scf

    from tilecc.host.pyscf import chemical_core

    mol = gto.M(atom=molecule, basis=basis, symmetry=True, verbose=0)
    mf = scf.RHF(mol).run()
    start = time.perf_counter()
    cc = tilecc.CCSD(mf, frozen=chemical_core(mol), **ctx_options).run()
    io = cc.context.io
    return {
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
    result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
