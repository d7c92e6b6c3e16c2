"""``tilecc run``: a molecule, a basis and a method in; energies, a table and JSON out."""

from __future__ import annotations

import json
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tilecc import _core
from tilecc.atomic import replaced_atomically
from tilecc.context import Context
from tilecc.trace import Decomposition

METHODS = ("ccd", "ccsd", "ccsd(t)", "drccd")
AVAILABLE = METHODS


@dataclass
class RunOptions:
    molecule: Path
    basis: str
    method: str = "ccsd"
    charge: int = 0
    spin: int = 0
    reference: str | None = None
    frozen_core: bool = True
    symmetry: bool = True
    tile: int = 16
    threads: int | None = None
    conv_tol: float = 1e-8
    conv_tol_normt: float = 1e-6
    max_iter: int = 50
    json: Path | None = None
    checkpoint: Path | None = None
    restart: bool = False
    bohr: bool = False
    policy: str = "counter"
    quantum: int = 1
    group_size: int | None = None
    refine: bool = True
    trace: Path | None = None


class NotConvergedError(RuntimeError):
    """The CC iterations stopped at max_iter; the results were still written."""


def check_writable(path: Path, what: str) -> None:
    """Fail now, not after the calculation, if ``path`` cannot be written."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise ValueError(f"cannot write the {what} {path}: folder {directory} does not exist.")
    if path.is_dir():
        raise ValueError(f"cannot write the {what} {path}: it is a folder.")
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".tilecc-probe-"):
            pass
    except OSError as exc:
        raise ValueError(f"cannot write the {what} {path}: {exc.strerror or exc}.") from None


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Never a half-written results file (see tilecc.atomic)."""
    with replaced_atomically(path) as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def validate(opts: RunOptions) -> None:
    if opts.method not in METHODS:
        raise ValueError(f"unknown method {opts.method!r}; choose one of {', '.join(METHODS)}.")
    if opts.method not in AVAILABLE:
        raise ValueError(
            f"method {opts.method!r} is not available in this version of tilecc yet; "
            f"use one of {', '.join(AVAILABLE)}."
        )
    if opts.tile < 1:
        raise ValueError(f"--tile must be a positive number of orbitals, got {opts.tile}.")
    if opts.max_iter < 1:
        raise ValueError(f"--max-iter must be at least 1, got {opts.max_iter}.")
    if not opts.conv_tol > 0 or not opts.conv_tol_normt > 0:
        raise ValueError("convergence thresholds must be positive numbers.")
    if opts.reference is not None and opts.reference not in ("rhf", "uhf", "rohf"):
        raise ValueError(f"unknown reference {opts.reference!r}; use rhf, uhf or rohf.")
    policies = _core.policy_names()
    if opts.policy not in policies:
        raise ValueError(
            f"unknown scheduling policy {opts.policy!r}; valid policies are: {', '.join(policies)}."
        )
    if opts.quantum < 1:
        raise ValueError(f"--quantum must be a whole number of tasks >= 1, got {opts.quantum}.")
    if opts.group_size is not None and opts.group_size < 1:
        raise ValueError(
            f"--group-size must be a whole number of workers >= 1, got {opts.group_size}."
        )
    if opts.json is not None:
        check_writable(opts.json, "JSON results file")
    if opts.trace is not None:
        check_writable(opts.trace, "trace file")
    if opts.restart and opts.checkpoint is None:
        raise ValueError("--restart continues from a checkpoint; give --checkpoint PATH too.")
    if opts.checkpoint is not None:
        if opts.restart and not opts.checkpoint.is_file():
            raise ValueError(
                f"cannot restart: checkpoint {opts.checkpoint} does not exist; run "
                f"once with --checkpoint {opts.checkpoint} first."
            )
        check_writable(opts.checkpoint, "checkpoint")


def runtime_summary(ctx: Context) -> dict[str, Any]:
    """The runtime's account of the run: policy, counter calls, and where the time went (paper
    000's decomposition), per contraction and in total, with the cost model's error."""
    total = ctx.decomposition()
    return {
        "policy": ctx.policy,
        "quantum": ctx.quantum,
        "refine": ctx.refine,
        "shared_calls_per_task": ctx.stats.shared_calls / max(1, ctx.stats.tasks),
        "total": total.as_dict() | {"imbalance": total.imbalance},
        "contractions": [
            {
                "expression": r.expression,
                "calls": r.calls,
                "tasks": r.tasks,
                "flops": r.flops,
                "shared_calls": r.shared_calls,
                "model_error_median": r.model_error[0],
                "model_error_p90": r.model_error[1],
                "imbalance_per_call": r.imbalance,
            }
            | r.time.as_dict()
            for r in ctx.contractions
        ],
    }


def decomposition_table(ctx: Context, rows: int = 8) -> Table:
    """Compute / permute / scheduling / idle / inspector seconds for the costliest contractions
    and in total (every contraction is in the JSON results)."""
    table = Table(title=f"where the time went, ms (policy {ctx.policy}, {ctx.threads} threads)")
    table.add_column("contraction")
    for name in ("compute", "permute", "sched.", "idle", "inspector", "model err."):
        table.add_column(name, justify="right")

    def add(name: str, d: Decomposition, error: str) -> None:
        values = (d.compute, d.permute, d.scheduling, d.idle, d.inspector)
        table.add_row(name, *(f"{1e3 * x:.1f}" for x in values), error)

    records = ctx.contractions
    for r in records[:rows]:
        median = r.model_error[0]
        add(r.expression, r.time, "" if median != median else f"{100 * median:.0f}%")
    if len(records) > rows:
        rest = Decomposition()
        for r in records[rows:]:
            rest.add(r.time)
        add(f"... {len(records) - rows} more", rest, "")
    add("total", ctx.decomposition(), "")
    return table


def run(opts: RunOptions, console: Console) -> dict[str, Any]:
    """Run the job; returns the results written to JSON. Raises ValueError for bad input and
    NotConvergedError (after writing the results) when the CC iterations did not converge."""
    from tilecc.cc import CCSD, DRCCD, GCCD, IterationRecord
    from tilecc.host import molecule as host

    validate(opts)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    atoms = host.read_xyz(opts.molecule)
    mol = host.build_molecule(
        atoms,
        basis=opts.basis,
        charge=opts.charge,
        spin=opts.spin,
        symmetry=opts.symmetry,
        unit="bohr" if opts.bohr else "angstrom",
    )
    reference = opts.reference or ("rhf" if mol.spin == 0 else "uhf")
    mf = host.run_scf(mol, reference)
    timings["scf"] = time.perf_counter() - start
    console.print(
        f"[bold]{opts.molecule.name}[/bold]: {mol.natm} atoms, {mol.nelectron} "
        f"electrons, {mol.nao} basis functions ({opts.basis}), point group "
        f"{mol.groupname if opts.symmetry else 'C1 (symmetry off)'}, "
        f"{reference.upper()} energy {mf.e_tot:.10f} Eh",
        highlight=False,
    )

    def show(rec: IterationRecord) -> None:
        console.print(
            f"  {rec.cycle:3d}  {rec.e_corr:+.12f}  {rec.delta_e:+.3e}  "
            f"{rec.residual_norm:.3e}  {rec.seconds:6.2f} s",
            highlight=False,
        )

    if opts.method == "drccd" and reference != "rhf":
        raise ValueError(
            "drCCD is defined here for closed-shell RHF references; use --reference "
            "rhf with 2S = 0."
        )
    # CCSD and CCSD(T) take the spin-adapted path for RHF references, spin orbitals otherwise.
    kind: Any = {"ccsd": CCSD, "ccsd(t)": CCSD, "ccd": GCCD, "drccd": DRCCD}[opts.method]
    frozen = None if opts.frozen_core else 0
    cc = kind(
        mf,
        frozen=frozen,
        tile=opts.tile,
        threads=opts.threads,
        conv_tol=opts.conv_tol,
        conv_tol_normt=opts.conv_tol_normt,
        max_cycle=opts.max_iter,
        callback=show,
        checkpoint=opts.checkpoint,
        restart=opts.restart,
        policy=opts.policy,
        quantum=opts.quantum,
        group_size=opts.group_size,
        refine=opts.refine,
        trace=opts.trace is not None,
    )
    console.print("  cycle  E(corr) / Eh        ΔE / Eh     |Δt|        time", style="dim")
    cc_start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # reported below, as a result
        cc.run()
    timings["cc"] = time.perf_counter() - cc_start - cc.context.stats.inspector_seconds
    timings["inspector"] = cc.context.stats.inspector_seconds
    if opts.method == "ccsd(t)" and cc.converged:
        t_start = time.perf_counter()
        with Progress(
            TextColumn("  (T)"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("occupied chunk triples"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:
            task = bar.add_task("(T)", total=None)
            cc.ccsd_t(progress=lambda done, total: bar.update(task, completed=done, total=total))
        timings["triples"] = time.perf_counter() - t_start
    timings["total"] = time.perf_counter() - start
    stats = cc.context.stats
    problem = cc.problem
    assert problem is not None and cc.t2 is not None
    t2 = cc.t2.storage_report()
    results: dict[str, Any] = {
        "molecule": str(opts.molecule),
        "method": opts.method,
        "basis": opts.basis,
        "reference": reference,
        "charge": opts.charge,
        "spin": opts.spin,
        "frozen_core_orbitals": problem.frozen,
        "symmetry": opts.symmetry,
        "point_group": mol.groupname if opts.symmetry else "C1",
        "tile": opts.tile,
        "threads": cc.context.threads,
        "e_scf": float(mf.e_tot),
        "e_corr": float(cc.e_corr),
        "e_t": getattr(cc, "e_t", None),
        "e_tot": float(cc.e_tot),
        "converged": bool(cc.converged),
        "iterations": cc.cycles,
        "timings": timings,
        "blocks": {
            "t2_blocks": t2["blocks"],
            "t2_stored_elements": t2["stored_elements"],
            "t2_dense_elements": t2["dense_elements"],
        },
        "flops": {
            "executed": stats.flops,
            "dense": stats.dense_flops,
            "tasks": stats.tasks,
            "plans_built": stats.plans_built,
            "plans_reused": stats.plans_reused,
        },
        "runtime": runtime_summary(cc.context),
    }
    table = Table(title=f"{opts.method.upper()} / {opts.basis} on {opts.molecule.name}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row(f"E({reference.upper()})", f"{mf.e_tot:.10f} Eh")
    label = "CCSD" if opts.method == "ccsd(t)" else opts.method.upper()
    table.add_row(f"E(corr, {label})", f"{cc.e_corr:.10f} Eh")
    if getattr(cc, "e_t", None) is not None:
        table.add_row("E(T)", f"{cc.e_t:.10f} Eh")
    table.add_row("E(total)", f"{cc.e_tot:.10f} Eh")
    table.add_row("converged", f"{cc.converged} after {cc.cycles} iterations")
    table.add_row(
        "t2 stored / dense elements", f"{t2['stored_elements']:,} / {t2['dense_elements']:,}"
    )
    table.add_row("executed / dense flops", f"{stats.flops:.3g} / {stats.dense_flops:.3g}")
    table.add_row(
        "time: SCF / CC / inspector",
        f"{timings['scf']:.2f} / {timings['cc']:.2f} / {timings['inspector']:.3f} s",
    )
    console.print(table)
    console.print(decomposition_table(cc.context))
    if opts.trace is not None:
        cc.context.write_trace(opts.trace)
        console.print(f"trace written to {opts.trace} (open it in ui.perfetto.dev)")
    if opts.json is not None:
        write_json_atomically(opts.json, results)
    if not cc.converged:
        raise NotConvergedError(
            f"{opts.method.upper()} did not converge in {opts.max_iter} "
            f"iterations; the last energies were written. Raise --max-iter or "
            f"loosen --conv-tol."
        )
    return results
