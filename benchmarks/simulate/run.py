#!/usr/bin/env python3
"""`tilecc simulate` against real runs on this machine: the iteration predicted from the real
plans (tilecc.simulate, platform ``shared-memory`` with this machine's cores) against the one
measured by benchmarks/mpi/job.py, for paper 004's CCD sub-computation and an N2/cc-pVTZ CCSD
iteration, at 1, 2 and 4 ranks of 1 thread and 1 rank of 2 threads, under each policy; the
error is (predicted - measured) / measured.

    python benchmarks/simulate/run.py [--json PATH] [--policies counter static-lpt ...]
                                      [--workloads ccd ccsd triples]

For the CCSD iteration the simulation adds what the iteration does between contractions: its
Python, timed on a planning pass, and its element-wise operations, priced by the cost model
(tilecc.simulate.host). The `triples` workload
predicts the (T) step of `tilecc run --method "ccsd(t)"` (under mpiexec for several ranks) from
the job's spaces and the calibrated cost model, against the step's measured time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from pyscf import gto, scf
from rich.console import Console
from rich.table import Table

import tilecc
from tilecc import measure
from tilecc.host.pyscf import chemical_core
from tilecc.simulate import HostWork, Platform, load_platform, predict, works_of
from tilecc.simulate.work import Work

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from paper004 import ccd_tensors  # noqa: E402

CONFIGS = [(1, 1), (2, 1), (4, 1), (1, 2)]  # (ranks, threads per rank)
#: (T) jobs, one per kernel: (name, atoms, basis, 2S, point group: True the largest D2h
#: subgroup, False none, or a name).
TRIPLES = [
    ("n2/cc-pvtz", "N 0 0 0; N 0 0 1.0977", "cc-pvtz", 0, True),
    ("h2o/aug-cc-pvtz C1", "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692",
     "aug-cc-pvtz", 0, False),
    ("OH/cc-pvtz UHF", "O 0 0 0; H 0 0 0.9697", "cc-pvtz", 1, "C2v"),
]  # fmt: skip


def mpi_benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("mpi_run", HERE.parent / "mpi" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ccd_works(threads: int) -> list[Work]:
    """The two contractions benchmarks/mpi/job.py times, planned only."""
    ctx = tilecc.Context(threads=threads, store="none")
    x = ccd_tensors(ctx, 0.35, 7, 18)
    x.contract()
    x.i0.context.settle(x.i0)
    return [Work.of_plan(p.plan, 1) for p in ctx.runtime.contractions() if p.built]


def ccsd_works(threads: int) -> tuple[list[Work], HostWork]:
    mol = gto.M(atom="N 0 0 0; N 0 0 1.0977", basis="cc-pvtz", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc = tilecc.CCSD(mf, frozen=chemical_core(mol), threads=threads, store="none")
        works, _, host = works_of(cc)
        return works, host


def triples_rows(platform: Platform) -> list[dict[str, Any]]:
    """(T) predicted from the spaces against measured in `tilecc run`, each kernel, 1 and 2
    ranks of 1 thread and 1 rank of 2 threads."""
    from tilecc.simulate import simulate_triples

    records = []
    for name, atoms, basis, spin, symmetry in TRIPLES:
        mol = gto.M(atom=atoms, basis=basis, spin=spin, symmetry=symmetry, verbose=0)
        mf = (scf.UHF if spin else scf.RHF)(mol).run(conv_tol=1e-10)
        with tempfile.TemporaryDirectory() as folder:
            xyz = Path(folder) / "molecule.xyz"
            lines = [a.strip() for a in atoms.split(";")]
            xyz.write_text(f"{len(lines)}\n0 {spin + 1}\n" + "\n".join(lines) + "\n")
            for ranks, threads in ((1, 1), (2, 1), (1, 2)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cc = tilecc.CCSD(mf, frozen=chemical_core(mol), threads=threads, store="none")
                    _, step, _ = works_of(cc, triples=True)
                assert step is not None
                predicted = simulate_triples(
                    step, platform, tilecc.simulate.ranks_on(platform, ranks, ranks), threads
                ).seconds
                out = Path(folder) / "out.json"
                tool = str(Path(sys.executable).parent / "tilecc")
                command = [tool, "run", str(xyz), "--basis", basis, "--method", "ccsd(t)",
                           "--threads", str(threads), "--json", str(out), "-q",
                           *(["--point-group", symmetry] if isinstance(symmetry, str) else
                             [] if symmetry else ["--no-symmetry"])]  # fmt: skip
                if ranks > 1:
                    command = [str(Path(sys.executable).parent / "mpiexec"), "-n", str(ranks),
                               *command]  # fmt: skip
                subprocess.run(command, check=True, capture_output=True)
                measured = json.loads(out.read_text())["extras"]["timings"]["triples"]
                records.append({
                    "workload": "triples", "case": name, "kernel": step.kernel, "ranks": ranks,
                    "threads": threads, "predicted_seconds": predicted,
                    "measured_seconds": measured, "error": (predicted - measured) / measured,
                    "platform": platform.name,
                })  # fmt: skip
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    measure.add_results_option(parser, __file__)
    parser.add_argument(
        "--policies", nargs="+", default=["tce", "counter", "static-block", "static-lpt"]
    )
    parser.add_argument(
        "--workloads", nargs="+", default=["ccd", "ccsd", "triples"],
        choices=["ccd", "ccsd", "triples"],
    )  # fmt: skip
    args = parser.parse_args()
    console = Console()
    platform = load_platform("shared-memory").with_options(cores_per_node=os.cpu_count())
    real = mpi_benchmark()
    table = Table(title=f"predicted vs measured, {platform.name}, {os.cpu_count()} cores")
    for col in ("workload", "ranks x threads", "policy", "predicted s", "measured s", "error"):
        table.add_column(col, justify="right")
    records = []
    for workload in [w for w in args.workloads if w != "triples"]:
        for ranks, threads in CONFIGS:
            # The CCSD iteration's Python and element-wise operations are simulated too; the
            # CCD sub-computation is its contractions alone.
            works, host = ccsd_works(threads) if workload == "ccsd" else (ccd_works(threads), None)
            for policy in args.policies:
                p = predict(
                    works, platform, ranks, ranks, threads, policy, scaling=[ranks], host=host
                )
                measured = real.run(workload, ranks, None, policy, threads)["iteration_s"]
                error = (p.iteration_seconds - measured) / measured
                records.append({
                    "workload": workload, "ranks": ranks, "threads": threads, "policy": policy,
                    "predicted_seconds": p.iteration_seconds, "measured_seconds": measured,
                    "error": error, "platform": platform.name,
                })  # fmt: skip
                table.add_row(
                    workload, f"{ranks} x {threads}", policy, f"{p.iteration_seconds:.4f}",
                    f"{measured:.4f}", f"{100 * error:+.0f}%",
                )  # fmt: skip
        table.add_section()
    if "triples" in args.workloads:
        for r in triples_rows(platform):
            records.append(r)
            table.add_row(
                f"(T) {r['case']} ({r['kernel']})", f"{r['ranks']} x {r['threads']}", "",
                f"{r['predicted_seconds']:.4f}", f"{r['measured_seconds']:.4f}",
                f"{100 * r['error']:+.0f}%",
            )  # fmt: skip
    console.print(table)
    errors = sorted(abs(r["error"]) for r in records)
    console.print(
        f"median |error| {100 * errors[len(errors) // 2]:.0f}%, largest {100 * errors[-1]:.0f}%"
    )
    if args.json:
        measure.write_json_lines(args.json, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
