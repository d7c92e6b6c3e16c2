#!/usr/bin/env python3
"""Which BLAS is fastest here: DGEMM GFLOP/s of every BLAS configuration tilecc could use.

    python benchmarks/blas/run.py [--json PATH] [--n N]

Configurations: OpenBLAS (scipy-openblas32) with its own CPU detection, with the kernel set tilecc
chooses from the CPU's features, and forced to SkylakeX / Haswell; MKL when libmkl_rt is in the
environment (`pip install mkl` to include it). Each runs in its own process, 1 and 2 threads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tilecc import _blas, _core, measure

HERE = Path(__file__).parent


def configurations() -> list[tuple[str, str, dict[str, str]]]:
    openblas = _blas.default_library()
    chosen = _core.blas_info()["core"] if _core.blas_loaded() else ""
    configs = [
        ("OpenBLAS, its own detection", openblas, {}),
        (
            f"OpenBLAS, tilecc's choice ({chosen})",
            openblas,
            {"OPENBLAS_CORETYPE": chosen} if chosen else {},
        ),
        ("OpenBLAS, SkylakeX (AVX-512)", openblas, {"OPENBLAS_CORETYPE": "SkylakeX"}),
        ("OpenBLAS, Haswell (AVX2)", openblas, {"OPENBLAS_CORETYPE": "Haswell"}),
    ]
    mkl = sorted(Path(sys.prefix, "lib").glob("libmkl_rt.so*"))
    if mkl:
        configs.append(("MKL", str(mkl[0]), {}))
    return configs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--n", type=int, default=3072)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    _blas.ensure_loaded()
    console = Console()
    table = Table(title=f"DGEMM n={args.n}, best of {args.repeats}")
    for col in ("configuration", "kernels", "1 thread GFLOP/s", "2 threads GFLOP/s"):
        table.add_column(col, justify="right")
    records = []
    for name, lib, env in configurations():
        rates, kernels = [], ""
        for threads in (1, 2):
            clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
            out = subprocess.run(
                [
                    sys.executable,
                    str(HERE / "dgemm_probe.py"),
                    lib,
                    str(threads),
                    str(args.n),
                    str(args.repeats),
                ],
                env={**clean, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout)
            kernels = result["kernels"]
            rates.append(result["gflops"])
            records.append({"configuration": name, "library": lib, "threads": threads, **result})
        table.add_row(name, kernels, f"{rates[0]:.1f}", f"{rates[1]:.1f}")
    console.print(table)
    if not any(r["configuration"] == "MKL" for r in records):
        console.print("MKL not measured: `pip install mkl` into this environment to include it.")
    best = max(records, key=lambda r: r["gflops"])
    console.print(
        f"fastest: {best['configuration']} at {best['gflops']:.1f} GFLOP/s "
        f"({best['threads']} threads)"
    )
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
