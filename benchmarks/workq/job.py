"""One rank's side of the WorkQ benchmark (run under mpiexec by run.py), timed over `repeats`
runs after the one that builds the plan (the fastest kept); rank 0 prints one JSON line.

- miniapp: paper 003's TCE mini-app, C[i,j] += A[i,k] B[k,j] over square tiles of `tile`
  orbitals per side, each task getting the A and B tiles it multiplies and accumulating its C
  tile;
- ladder: CCSD's particle-particle ladder r[i,j,a,b] += t[i,j,c,d] v[a,b,c,d] (o = 10, v = n),
  tiles of `tile` orbitals.
"""

from __future__ import annotations

import json
import sys
import time

import tilecc
from tilecc import mpi


def main() -> None:
    workload = sys.argv[1]
    tile, depth, n, repeats = (int(x) for x in sys.argv[2:6])
    ctx = tilecc.Context(threads=1, policy="static-lpt", workq=depth)
    if workload == "miniapp":
        p = tilecc.Space.spatial(n, tile=tile)
        a, b = tilecc.Tensor([p, p], context=ctx), tilecc.Tensor([p, p], context=ctx)
        shape, labels = [p, p], ("ij", "ik", "kj")
    else:
        o = tilecc.Space.spatial(10, tile=tile, kind="occupied")
        v = tilecc.Space.spatial(n, tile=tile, kind="virtual")
        a, b = tilecc.Tensor([o, o, v, v], context=ctx), tilecc.Tensor([v, v, v, v], context=ctx)
        shape, labels = [o, o, v, v], ("ijab", "ijcd", "abcd")
    a.fill_random_(1)
    b.fill_random_(2)
    best = float("inf")
    for _ in range(repeats + 1):
        c = tilecc.Tensor(shape, context=ctx)
        mpi.communicator().barrier()
        start = time.perf_counter()
        c[labels[0]] = a[labels[1]] * b[labels[2]]
        best = min(best, time.perf_counter() - start)
    checksum = float((c.to_dense() ** 2).sum())
    if mpi.world().leader:
        record = {"workload": workload, "tile": tile, "depth": depth, "n": n, "seconds": best}
        print(json.dumps({**record, "checksum": checksum}))


if __name__ == "__main__":
    main()
