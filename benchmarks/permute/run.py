#!/usr/bin/env python3
"""Block permutation: tilecc's kernel against NumPy's transpose copy, on CC-shaped blocks.

    python benchmarks/permute/run.py [--json PATH]

Prints GB/s moved (read + write) by each and the ratio tilecc / NumPy, measured in the same run.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from rich.console import Console
from rich.table import Table

from tilecc import kernels, measure

PERMUTATIONS = [(1, 0, 2, 3), (0, 1, 3, 2), (2, 3, 0, 1), (0, 2, 1, 3), (3, 2, 1, 0), (1, 3, 0, 2)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    console = Console()
    table = Table(title="block permutation: tilecc kernel vs numpy transpose copy")
    for col in ("tile", "axes", "tilecc GB/s", "numpy GB/s", "tilecc/numpy"):
        table.add_column(col, justify="right")
    rng = np.random.default_rng(0)
    records = []
    for tile in (16, 32, 64):
        src = rng.standard_normal((tile,) * 4)
        for axes in PERMUTATIONS:
            out = np.empty((tile,) * 4)
            moved = 2 * src.nbytes
            t_tilecc = measure.best_time(
                lambda s=src, a=axes, o=out: kernels.permute(s, a, o), args.repeats
            )
            t_numpy = measure.best_time(
                lambda s=src, a=axes, o=out: np.copyto(o, s.transpose(a)), args.repeats
            )
            rec = {
                "tile": tile,
                "axes": list(axes),
                "tilecc_gbs": moved / t_tilecc * 1e-9,
                "numpy_gbs": moved / t_numpy * 1e-9,
                "ratio": t_numpy / t_tilecc,
            }
            records.append(rec)
            table.add_row(
                str(tile),
                str(axes),
                f"{rec['tilecc_gbs']:.1f}",
                f"{rec['numpy_gbs']:.1f}",
                f"{rec['ratio']:.2f}",
            )
    console.print(table)
    ratios = np.array([r["ratio"] for r in records])
    console.print(
        f"tilecc over numpy, geometric mean of {len(ratios)} cases: "
        f"{np.exp(np.mean(np.log(ratios))):.2f}x (min {ratios.min():.2f}x)"
    )
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
