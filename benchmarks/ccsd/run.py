#!/usr/bin/env python3
"""Whole CCSD(T) jobs: tilecc against PySCF and Psi4 on the same molecules, threads and machine.

    bash benchmarks/ccsd/setup.sh            # once: installs Psi4 (Debian package)
    python benchmarks/ccsd/run.py [--json PATH] [--quick | --open-shell] [--cases NAME...]
                                  [--threads N]

Every job runs in its own process under GNU time (peak memory); the table ends with the time
ratios tilecc/PySCF and tilecc/Psi4 for the whole job and per phase, and tilecc's executed-flop
rates of the CCSD iterations and of (T) over the DGEMM rate, all measured in this run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from molecules import CASES, OPEN_SHELL, QUICK, Case
from rich.console import Console
from rich.table import Table

from tilecc import measure

HERE = Path(__file__).parent
COMPETITORS = {"tilecc": "tilecc_job.py", "pyscf": "pyscf_job.py", "psi4": "psi4_job.py"}


def run_job(script: str, case: Case, xyz: Path, threads: int, timeout: float) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".time") as rss:
        try:
            proc = subprocess.run(
                [
                    "/usr/bin/time",
                    "-f",
                    "%M",
                    "-o",
                    rss.name,
                    sys.executable,
                    str(HERE / script),
                    case.basis,
                    str(xyz),
                    str(threads),
                    str(case.spin),
                    case.reference,
                ],
                capture_output=True,
                text=True,
                check=False,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"did not finish within {timeout:.0f} s"}
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        if proc.returncode != 0 or not lines:
            return {"error": (proc.stderr or proc.stdout)[-300:].strip()}
        result = json.loads(lines[-1])
        try:
            result["peak_mb"] = int(Path(rss.name).read_text().split()[-1]) / 1024
        except (ValueError, IndexError):
            result["peak_mb"] = None
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    measure.add_results_option(parser, __file__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--open-shell", action="store_true", help="the UHF and ROHF cases only")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--cases", nargs="+", help="only the cases whose names start with these (e.g. uracil)"
    )
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    console = Console()
    cases = QUICK if args.quick else OPEN_SHELL if args.open_shell else CASES
    if args.cases:
        cases = {k: v for k, v in cases.items() if k.startswith(tuple(args.cases))}
    # The rate the hardware allows: tilecc's executed-flop rates are printed against it.
    dgemm = measure.dgemm_gflops(args.threads)
    table = Table(title=f"CCSD(T), frozen core, {args.threads} threads: whole job")
    for col in (
        "molecule",
        "program",
        "E(total) / Eh",
        "SCF s",
        "CCSD s",
        "(T) s",
        "total s",
        "peak MB",
    ):
        table.add_column(col, justify="right")
    records, ratios = [], []
    for name, case in cases.items():
        with tempfile.TemporaryDirectory() as work:
            xyz = Path(work, "mol.xyz")
            xyz.write_text(f"{len(case.atoms)}\n{name}\n" + "\n".join(case.atoms) + "\n")
            results = {
                p: run_job(s, case, xyz, args.threads, args.timeout) for p, s in COMPETITORS.items()
            }
        for program, r in results.items():
            records.append(
                {
                    "molecule": name,
                    "basis": case.basis,
                    "reference": case.reference,
                    "program": program,
                    "threads": args.threads,
                    **r,
                }
            )
            if "error" in r:
                table.add_row(name, program, f"[red]{r['error'][:60]}[/red]", "", "", "", "", "")
                continue

            def fmt(x: float | None) -> str:
                return "" if x is None else f"{x:.2f}"

            table.add_row(
                name,
                program,
                f"{r['e_tot']:.8f}",
                fmt(r["scf_s"]),
                fmt(r["ccsd_s"]),
                fmt(r["t_s"]),
                fmt(r["total_s"]),
                fmt(r["peak_mb"]),
            )
        mine = results["tilecc"]
        if "ccsd_gflops" in mine:
            mine["dgemm_gflops"] = dgemm
            ratios.append(
                f"{name}: tilecc executed GFLOP/s, CCSD iterations {mine['ccsd_gflops']:.1f} "
                f"({mine['ccsd_gflops'] / dgemm:.2f} of DGEMM's {dgemm:.1f}), "
                f"(T) {mine['t_gflops']:.1f} ({mine['t_gflops'] / dgemm:.2f})"
            )
        for other in ("pyscf", "psi4"):
            theirs = results[other]
            if "error" in mine or "error" in theirs:
                continue
            line = f"{name}: tilecc/{other} whole job {mine['total_s'] / theirs['total_s']:.2f}"
            if theirs.get("t_s"):
                line += (
                    f", CCSD {mine['ccsd_s'] / theirs['ccsd_s']:.2f}, "
                    f"(T) {mine['t_s'] / theirs['t_s']:.2f}"
                )
            if mine.get("peak_mb") and theirs.get("peak_mb"):
                line += f", peak memory {mine['peak_mb'] / theirs['peak_mb']:.2f}"
            line += f"; |ΔE| = {abs(mine['e_tot'] - theirs['e_tot']):.1e} Eh"
            ratios.append(line)
    console.print(table)
    for line in ratios:
        console.print(line)
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
