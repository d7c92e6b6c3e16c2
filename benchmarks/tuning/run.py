#!/usr/bin/env python3
"""Tuning: `tilecc tune` on a set of problems (in a wisdom file of its own), then, per problem,
the tuned configuration's iteration time over the default's (tile 16, quantum 1, counter), and
the tuning model's accuracy on problems it was not fitted to (each left out in turn).

    python benchmarks/tuning/run.py [--json PATH] [--budget 60s] [--cases NAME ...]

Times are the second iteration of each configuration, in one `tilecc tune` run per problem; the
default's is the first trial of that same run, so each ratio is taken within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "ccsd"))
from molecules import BENZENE, HYDROXYL, METHANOL, NITROGEN, URACIL, WATER

from tilecc import measure

#: name: (atoms, basis, 2S)
CASES = {
    "h2o/cc-pvdz": (WATER, "cc-pvdz", 0),
    "h2o/cc-pvtz": (WATER, "cc-pvtz", 0),
    "n2/cc-pvdz": (NITROGEN, "cc-pvdz", 0),
    "n2/cc-pvtz": (NITROGEN, "cc-pvtz", 0),
    "methanol/cc-pvdz": (METHANOL, "cc-pvdz", 0),
    "OH/cc-pvtz UHF": (HYDROXYL, "cc-pvtz", 1),
    "benzene/cc-pvdz": (BENZENE, "cc-pvdz", 0),
    # A job whose iterations take a second: give it a budget of several minutes (--cases).
    "uracil/cc-pvdz": (URACIL, "cc-pvdz", 0),
}
DEFAULT_CASES = [name for name in CASES if not name.startswith("uracil")]


def tune(name: str, budget: str, wisdom: Path, folder: Path) -> dict:
    atoms, basis, spin = CASES[name]
    xyz = folder / "molecule.xyz"
    xyz.write_text(f"{len(atoms)}\n0 {spin + 1}\n" + "\n".join(atoms) + "\n")
    out = folder / "tune.json"
    run = subprocess.run(
        [sys.executable, "-m", "tilecc", "tune", str(xyz), "--basis", basis, "--budget", budget,
         "--json", str(out), "-q"],
        capture_output=True, text=True, env={**os.environ, "TILECC_WISDOM": str(wisdom)},
        check=False,
    )  # fmt: skip
    if run.returncode != 0:
        return {"error": (run.stdout + run.stderr).strip().splitlines()[-1][:80]}
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--budget", default="60s", help="tilecc tune's budget per problem")
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES, choices=list(CASES))
    args = parser.parse_args()
    console = Console()
    table = Table(title=f"tilecc tune, {args.budget} per problem")
    for column in ("problem", "configurations", "best", "default s", "best s", "default/best"):
        table.add_column(column, justify="right")
    records = []
    with tempfile.TemporaryDirectory() as d:
        folder, wisdom = Path(d), Path(d) / "wisdom.json"
        model = None
        for name in args.cases:
            result = tune(name, args.budget, wisdom, folder)
            if "error" in result:
                table.add_row(name, result["error"], "", "", "", "")
                continue
            trials = [t for t in result["trials"] if t["error"] is None]
            default, best = trials[0], result["best"]
            label = f"tile {best['tile']}, q {best['quantum']}, {best['policy']}"
            ratio = default["seconds"] / best["seconds"]
            table.add_row(name, str(len(trials)), label, f"{default['seconds']:.4f}",
                          f"{best['seconds']:.4f}", f"{ratio:.2f}")  # fmt: skip
            model = result["model"] or model
            records.append(
                {
                    "workload": "tune",
                    "problem": name,
                    "budget": args.budget,
                    "configurations": len(trials),
                    "best": label,
                    "default_seconds": default["seconds"],
                    "best_seconds": best["seconds"],
                    "default_over_best": ratio,
                }
            )
    console.print(table)
    if model is not None:
        ratios = model["left_out_ratios"]
        console.print(
            f"tuning model, {model['problems']} problems each left out in turn: its pick within "
            f"10% of the best on {100 * model['within_10_percent']:.0f}% (ratios "
            f"{', '.join(f'{r:.2f}' for r in ratios)})"
        )
        records.append(
            {
                "workload": "model",
                "problems": model["problems"],
                "within_10_percent": model["within_10_percent"],
                "mean_ratio": sum(ratios) / len(ratios),
                "worst_ratio": max(ratios),
            }
        )
    if args.json:
        measure.write_json_lines(args.json, records)


if __name__ == "__main__":
    main()
