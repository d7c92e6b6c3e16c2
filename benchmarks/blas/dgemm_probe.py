"""One BLAS in one process: load it with ctypes, report its kernel set and DGEMM GFLOP/s.

    python dgemm_probe.py LIBRARY THREADS N REPEATS

Prints one JSON object. Run once per BLAS configuration (OpenBLAS reads OPENBLAS_CORETYPE only
when it is loaded, so each configuration needs its own process).
"""

from __future__ import annotations

import ctypes
import json
import sys
import time

import numpy as np


def symbol(lib: ctypes.CDLL, *names: str):  # type: ignore[no-untyped-def]
    for name in names:
        try:
            return getattr(lib, name)
        except AttributeError:
            continue
    return None


def main() -> None:
    path, threads, n, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    lib = ctypes.CDLL(path)
    dgemm = symbol(lib, "scipy_dgemm_", "dgemm_")
    set_threads = symbol(
        lib, "scipy_openblas_set_num_threads", "openblas_set_num_threads", "MKL_Set_Num_Threads"
    )
    core = symbol(lib, "scipy_openblas_get_corename", "openblas_get_corename")
    if set_threads is not None:
        set_threads(ctypes.c_int(threads))
    kernels = "library dispatch"
    if core is not None:
        core.restype = ctypes.c_char_p
        kernels = core().decode()
    a = np.asfortranarray(np.random.default_rng(0).random((n, n)))
    b, c = a.copy(order="F"), np.zeros((n, n), order="F")
    ptr = ctypes.POINTER(ctypes.c_double)
    ni, one, zero, no = (
        ctypes.c_int(n),
        ctypes.c_double(1.0),
        ctypes.c_double(0.0),
        ctypes.c_char(b"N"),
    )

    def run() -> None:
        dgemm(
            ctypes.byref(no),
            ctypes.byref(no),
            ctypes.byref(ni),
            ctypes.byref(ni),
            ctypes.byref(ni),
            ctypes.byref(one),
            a.ctypes.data_as(ptr),
            ctypes.byref(ni),
            b.ctypes.data_as(ptr),
            ctypes.byref(ni),
            ctypes.byref(zero),
            c.ctypes.data_as(ptr),
            ctypes.byref(ni),
        )

    # Timed here rather than with tilecc.measure.best_time: importing tilecc would load its own
    # BLAS into this process, next to the one being measured.
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"kernels": kernels, "gflops": 2.0 * n**3 / best * 1e-9}))


if __name__ == "__main__":
    main()
