"""The OpenBLAS kernels tilecc chooses from the CPU's flags reach every OpenBLAS in the process,
PySCF's bundled one included (it runs the integral transformation and the SCF)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Imports tilecc, then PySCF's C library, and prints the core name of each OpenBLAS loaded.
PROBE = """
import ctypes, json
import tilecc
from pyscf.lib import numpy_helper  # loads PySCF's C helpers and the OpenBLAS they link
names = {}
for line in open('/proc/self/maps'):
    path = line.split()[-1]
    if 'openblas' in path and '.so' in path:
        lib = ctypes.CDLL(path)
        for symbol in ('openblas_get_corename', 'scipy_openblas_get_corename'):
            if hasattr(lib, symbol):
                getattr(lib, symbol).restype = ctypes.c_char_p
                names[path] = getattr(lib, symbol)().decode().lower()
print(json.dumps(names))
"""


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def expected_core(flags: set[str]) -> str | None:
    if {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags:
        return "skylakex"
    if {"avx2", "fma"} <= flags:
        return "haswell"
    return None


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="needs Linux's /proc/cpuinfo")
def test_every_openblas_in_the_process_runs_the_kernels_the_cpu_flags_name():
    expected = expected_core(cpu_flags())
    if expected is None:
        pytest.skip("this CPU has neither AVX-512 nor AVX2+FMA: OpenBLAS detects it itself")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    cores = json.loads(out.stdout.strip().splitlines()[-1])
    assert any("pyscf" in path for path in cores), cores  # PySCF's own OpenBLAS was probed
    assert set(cores.values()) == {expected}, cores
