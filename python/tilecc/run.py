"""``tilecc run``: a molecule, a basis and a method in; energies, a table and JSON out."""

from __future__ import annotations

import json
import logging
import os
import socket
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tilecc import mpi
from tilecc.cc.solver import check_iteration_options
from tilecc.context import Context
from tilecc.files import check_outputs, exclusive_lock, is_special, replaced_atomically
from tilecc.host.scf import SCFOptions
from tilecc.log import LOGGER, RESULT, show
from tilecc.memory import peak_rss_bytes
from tilecc.options import RuntimeOptions, show_bytes
from tilecc.trace import Decomposition
from tilecc.wisdom import wisdom_path

METHODS = ("ccd", "ccsd", "ccsd(t)", "drccd")
AVAILABLE = METHODS


@dataclass
class RunOptions:
    #: The XYZ file, or the QCSchema input the job came from (then ``atoms`` holds its atoms).
    molecule: Path
    basis: str
    method: str = "ccsd"
    #: None: from the XYZ comment line when it gives them, else 0.
    charge: int | None = None
    spin: int | None = None
    reference: str | None = None
    #: Orbitals frozen: None means the chemical core, unless ``frozen_core`` is False.
    frozen: int | None = None
    frozen_core: bool | None = None
    symmetry: bool = True
    point_group: str | None = None
    cartesian: bool = False
    #: ROHF only: iterate on semicanonical orbitals (always so for ccsd(t)).
    semicanonical: bool = False
    #: drCCD on several ranks: the processor grid of its ring terms (tilecc.cc.ring_grid).
    grid: str | None = None
    scf_conv: float = 1e-10
    scf_max_iter: int = 100
    scf_guess: str = "minao"
    scf_chkfile: Path | None = None
    stability: bool = True
    tile: int = 16
    #: Threads, policy, quantum, group size, refinement, store (tilecc.options); the trace is
    #: kept when ``trace`` names a file.
    runtime: RuntimeOptions = field(default_factory=RuntimeOptions)
    conv_tol: float = 1e-8
    conv_tol_normt: float = 1e-6
    max_iter: int = 50
    json: Path | None = None
    checkpoint: Path | None = None
    restart: bool = False
    bohr: bool = False
    trace: Path | None = None
    #: Print where the runtime's time went (always in the JSON results, under "runtime").
    timings: bool = False
    #: ``tilecc plan``: predict the job's memory, time and I/O instead of running CC.
    plan_only: bool = False
    #: ``tilecc simulate``: predict an iteration on many ranks instead of running CC.
    simulate: Any = None
    #: The store was not chosen: run in memory, or through disk when the job's plan says it
    #: does not fit in the memory budget.
    store_chosen: bool = True
    #: The atoms, (symbol, x, y, z), when they come from a QCSchema input rather than an XYZ file.
    atoms: list[tuple[str, float, float, float]] | None = None
    #: The QCSchema AtomicInput the job came from (its id, molecule and keywords go into the
    #: AtomicResult).
    qcschema: dict[str, Any] | None = None
    #: Which of tile, quantum and policy the user chose; the others come from a tuned
    #: configuration when there is one (tilecc.tune).
    chosen: frozenset[str] = frozenset({"tile", "quantum", "policy"})
    #: ``tilecc tune``: explore configurations instead of running the job.
    tune: Any = None


class NotConvergedError(RuntimeError):
    """The CC iterations stopped at max_iter; the results were still written."""


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Never a half-written results file (see tilecc.files)."""
    with replaced_atomically(path, what="JSON results file") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def final_lines(
    method: str, reference: str, e_scf: float, e_corr: float, e_t: float | None
) -> list[str]:
    """The closing lines a chemist greps for, as Psi4, ORCA and NWChem print them.

    >>> for line in final_lines("ccsd(t)", "rhf", -76.0, -0.2, -0.003):
    ...     print(line)
    RHF total energy = -76.000000000000
    CCSD correlation energy = -0.200000000000
    CCSD total energy = -76.200000000000
    (T) correction energy = -0.003000000000
    CCSD(T) total energy = -76.203000000000
    tilecc: normal termination
    """
    name = "CCSD" if method == "ccsd(t)" else method.upper()
    lines = [
        f"{reference.upper()} total energy = {e_scf:.12f}",
        f"{name} correlation energy = {e_corr:.12f}",
        f"{name} total energy = {e_scf + e_corr:.12f}",
    ]
    if e_t is not None:
        lines += [
            f"(T) correction energy = {e_t:.12f}",
            f"CCSD(T) total energy = {e_scf + e_corr + e_t:.12f}",
        ]
    return [*lines, "tilecc: normal termination"]


class ResultsNotWrittenError(OSError):
    """The job ran, but its results file could not be written; they were kept elsewhere."""


def keep_results(path: Path, results: dict[str, Any], console: Console) -> None:
    """Write the results to ``path``; when that fails at the end of a job (a full disk, a
    folder gone), keep them in a file in the temporary folder, or else on standard output, say
    where, and raise ResultsNotWrittenError so that the exit code tells a script."""
    try:
        write_json_atomically(path, results)
        return
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    fallback = Path(tempfile.gettempdir()) / f"tilecc-results-{os.getpid()}.json"
    try:
        write_json_atomically(fallback, results)
        where = f"they are in {fallback}"
    except (OSError, ValueError):
        console.print(json.dumps(results, indent=2), highlight=False, markup=False)
        where = "they are printed above"
    raise ResultsNotWrittenError(
        f"the job finished but its results could not be written to {path} ({reason}); {where}."
    )


def validate(opts: RunOptions) -> None:
    if opts.method not in METHODS:
        raise ValueError(f"unknown method {opts.method!r}; choose one of {', '.join(METHODS)}.")
    if opts.method not in AVAILABLE:
        raise ValueError(
            f"method {opts.method!r} is not available in this version of tilecc yet; "
            f"use one of {', '.join(AVAILABLE)}."
        )
    check_iteration_options(
        tile=opts.tile,
        conv_tol=opts.conv_tol,
        conv_tol_normt=opts.conv_tol_normt,
        max_cycle=opts.max_iter,
    )
    if opts.reference is not None and opts.reference not in ("rhf", "uhf", "rohf"):
        raise ValueError(f"unknown reference {opts.reference!r}; use rhf, uhf or rohf.")
    opts.runtime.check()
    if opts.grid is not None:
        from tilecc.cc.ring_grid import check_kind

        if opts.method != "drccd":
            raise ValueError(
                f"--grid lays out drCCD's ring terms and the method is {opts.method}; use "
                f"--method drccd or leave --grid out."
            )
        check_kind(opts.grid, mpi.world().size)
    if opts.restart and opts.checkpoint is None:
        raise ValueError("--restart continues from a checkpoint; give --checkpoint PATH too.")
    if opts.checkpoint is not None and is_special(opts.checkpoint):
        raise ValueError(
            f"the checkpoint must be a regular file, not {opts.checkpoint}; give a file path."
        )
    basis = Path(opts.basis)
    check_outputs(
        {
            "molecule file": opts.molecule,
            "basis file": basis if basis.is_file() else None,
            "SCF chkfile": opts.scf_chkfile,
            "wisdom file": wisdom_path(),
        },
        {
            "JSON results file": opts.json,
            "trace file": opts.trace,
            "checkpoint": opts.checkpoint,
        },
    )
    if opts.frozen is not None:
        if opts.frozen < 0:
            raise ValueError(f"--frozen must be a number of orbitals >= 0, got {opts.frozen}.")
        if opts.frozen_core is not None:
            raise ValueError(
                "--frozen N and --frozen-core/--no-frozen-core both say what to freeze; give "
                "one of them."
            )
    scf_options(opts).validate()
    if opts.method == "ccsd(t)":
        from tilecc.cc.triples import check_loop

        check_loop(os.environ.get("TILECC_TRIPLES_LOOP") or None)


def scf_options(opts: RunOptions) -> SCFOptions:
    return SCFOptions(
        conv_tol=opts.scf_conv,
        max_cycle=opts.scf_max_iter,
        guess=opts.scf_guess,
        chkfile=opts.scf_chkfile,
        stability=opts.stability,
    )


def charge_and_spin(opts: RunOptions) -> tuple[int, int]:
    """The charge and 2S: from the options, else from the XYZ comment line, else 0 and 0; an
    option that contradicts the file is refused."""
    from tilecc.host.molecule import read_charge_and_multiplicity

    if opts.atoms is not None:  # a QCSchema input: its molecule gives them
        return opts.charge or 0, opts.spin or 0
    charge, multiplicity = read_charge_and_multiplicity(opts.molecule)
    spin = None if multiplicity is None else multiplicity - 1
    for flag, given, written, what in (
        ("--charge", opts.charge, charge, "charge"),
        ("--spin", opts.spin, spin, "2S (multiplicity - 1)"),
    ):
        if given is not None and written is not None and given != written:
            raise ValueError(
                f"{opts.molecule}, line 2 gives {what} {written} but {flag} {given} was "
                f"given; make them agree or leave out {flag}."
            )
    return (
        opts.charge if opts.charge is not None else (charge or 0),
        opts.spin if opts.spin is not None else (spin or 0),
    )


def runtime_summary(ctx: Context) -> dict[str, Any]:
    """The runtime's account of the run: policy, counter calls, and where the time went (paper
    000's decomposition), per contraction and in total, with the cost model's error."""
    total = ctx.decomposition()
    return {
        "policy": ctx.policy,
        # On several ranks, which rank runs each task (None: the policy shares them out).
        "placement": ctx.placement,
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


def communication(ctx: Context) -> dict[str, int]:
    """What this process's tensors moved: bytes by where the other end was (this process, a rank
    on this node, another node), remote block reads (gets), block writes that went through a
    store rather than in place (accumulates), and counter fetches."""
    traffic = ctx.runtime.traffic
    reads, writes = traffic["reads"], traffic["writes"]

    def total(index: int, classes: tuple[str, ...], *counters: dict) -> int:
        return sum(int(counter[name][index]) for counter in counters for name in classes)

    return {
        "bytes_local": total(0, ("view", "copy"), reads, writes),
        "bytes_intra_node": total(0, ("intra_node",), reads, writes),
        "bytes_inter_node": total(0, ("inter_node",), reads, writes),
        "gets": total(1, ("intra_node", "inter_node"), reads),
        "accumulates": total(1, ("copy", "intra_node", "inter_node"), writes),
        "counter_calls": int(ctx.stats.shared_calls),
    }


def per_rank(ctx: Context) -> dict[str, Any]:
    """Each rank's communication and peak memory, and their totals (every rank gets them)."""
    moved = communication(ctx)
    mine = {
        "rank": mpi.world().rank,
        "communication": moved,
        "peak_rss_bytes": peak_rss_bytes(),
        # The (T) kernel's repacked inputs: held once per node, by its first rank, those indexed
        # by an occupied orbital spread over the nodes; and what its tasks got of those.
        "triples_input_bytes": int(ctx.stats.triples_input_bytes),
        "triples_fetched_bytes": int(ctx.stats.triples_fetched_bytes),
    }
    ranks = mpi.gather(mine)
    totals: dict[str, Any] = {key: sum(r["communication"][key] for r in ranks) for key in moved}
    totals["network_emulation"] = mpi.network()
    return {
        "communication": totals,
        "peak_rss_bytes": sum(r["peak_rss_bytes"] for r in ranks),
        "ranks": ranks,
    }


def decomposition_table(ctx: Context, rows: int = 8) -> Table:
    """Compute / permute / scheduling / idle / inspector seconds for the costliest contractions
    and in total (every contraction is in the JSON results)."""
    table = Table(title=f"where the time went, ms (policy {ctx.policy}, {ctx.threads} threads)")
    table.add_column("contraction")
    for name in ("compute", "permute", "transfer", "sched.", "idle", "inspector", "model err."):
        table.add_column(name, justify="right")

    def add(name: str, d: Decomposition, error: str) -> None:
        values = (d.compute, d.permute, d.transfer, d.scheduling, d.idle, d.inspector)
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


def banner(opts: RunOptions) -> str:
    """Who ran the job, where and with what: the first lines of every log, as Psi4 and NWChem
    start theirs."""
    import numpy
    import pyscf

    from tilecc import _core
    from tilecc.context import _default_threads

    w = mpi.world()
    threads = opts.runtime.threads or _default_threads()
    ranks = (
        f"{w.size} MPI ranks ({w.ranks_per_node} per {'virtual ' if w.virtual_nodes else ''}node), "
        if w.size > 1
        else ""
    )
    budget = opts.runtime.memory_budget
    memory = f"memory budget {show_bytes(budget)}" if budget else "no memory budget"
    return (
        f"tilecc {_core.version()} (PySCF {pyscf.__version__}, NumPy {numpy.__version__}, MPI: "
        f"{escape(w.library)}) on {socket.gethostname()}, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {ranks}{threads} threads"
        f"{' per rank' if ranks else ''}, {memory}"
    )


def problem_class(
    opts: RunOptions, mf: Any, frozen: int, reference: str, threads: int
) -> tuple[str, dict[str, float]]:
    """The tuning class of the job (tilecc.tune.size_class) and the features a tuning model
    reads (tilecc.tune_model): active occupied and virtual orbitals (spin orbitals for an
    unrestricted reference), irreps, threads."""
    import numpy as np

    from tilecc import tune

    mo_occ = np.asarray(mf.mo_occ)
    per_spin = list(mo_occ) if mo_occ.ndim == 2 else [mo_occ]
    occupied = sum(int(np.count_nonzero(occ > 0)) - frozen for occ in per_spin)
    virtual = sum(int(np.count_nonzero(occ == 0)) for occ in per_spin)
    group = mf.mol.groupname if mf.mol.symmetry else "C1"
    irreps = len(mf.mol.irrep_name) if mf.mol.symmetry else 1
    features: dict[str, float] = {
        "occupied": occupied,
        "virtual": virtual,
        "irreps": irreps,
        "threads": threads,
    }
    return tune.size_class(opts.method, reference, occupied, virtual, group), features


def configure(
    opts: RunOptions, problem: str, features: dict[str, float]
) -> tuple[RunOptions, dict[str, Any]]:
    """The job's tile, quantum and policy: the user's where given, else a tuned configuration of
    this machine and problem class, else one a model of the problems tuned here predicts, else
    the defaults; and where they came from."""
    import dataclasses

    from tilecc import tune, tune_model, wisdom

    source = "user" if opts.chosen else "default"
    found = None
    if not opts.chosen >= {"tile", "quantum", "policy"}:
        found = tune.tuned(problem)
        source = "tuned" if found is not None else source
        if found is None:
            entries = wisdom.entries(wisdom.wisdom_path())
            model = tune_model.fitted(tune_model.problems_of(entries, wisdom.machine_key()))
            found = model.choose(features) if model is not None else None
            source = "predicted" if found is not None else source
    if found is not None:
        runtime = dataclasses.replace(
            opts.runtime,
            quantum=opts.runtime.quantum if "quantum" in opts.chosen else found.quantum,
            policy=opts.runtime.policy if "policy" in opts.chosen else found.policy,
        )
        tile = opts.tile if "tile" in opts.chosen else found.tile
        opts = dataclasses.replace(opts, tile=tile, runtime=runtime)
    return opts, {
        "tile": opts.tile,
        "quantum": opts.runtime.quantum,
        "policy": opts.runtime.policy,
        "source": source,
        **({"predicted_by": "tuning model"} if source == "predicted" else {}),
        "class": problem,
        "features": features,
    }


def orbital_lines(mf: Any, frozen: int) -> list[str]:
    """Orbital counts, as a chemist checks them: frozen (the ``frozen`` lowest), active
    occupied and virtual, in total and per irrep, for each spin of an unrestricted reference."""
    import numpy as np
    from pyscf import symm

    mol = mf.mol
    mo_occ = np.asarray(mf.mo_occ)
    unrestricted = mo_occ.ndim == 2
    spins = [("alpha ", mf.mo_coeff[0], mo_occ[0]), ("beta ", mf.mo_coeff[1], mo_occ[1])]
    names = list(mol.irrep_name) if mol.symmetry else []
    lines = []
    for spin, coeff, occ in spins if unrestricted else [("", mf.mo_coeff, mo_occ)]:
        labels = symm.label_orb_symm(mol, names, mol.symm_orb, coeff) if names else []
        kinds: dict[str, list[int]] = {"frozen": [], "active occupied": [], "virtual": []}
        for p in range(len(occ)):
            kind = "frozen" if p < frozen else "active occupied" if occ[p] > 0 else "virtual"
            kinds[kind].append(p)

        parts = []
        for kind, members in kinds.items():
            found = [labels[p] for p in members] if names else []
            shown = " ".join(str(found.count(n)) for n in names)
            parts.append(f"{len(members)} {kind}" + (f" ({shown})" if len(names) > 1 else ""))
        counts = ", ".join(parts)
        irreps = f" [{' '.join(names)}]" if len(names) > 1 else ""
        lines.append(f"{spin}orbitals{irreps}: {counts}")
    return lines


def show_plan(opts: RunOptions, cc: Any) -> dict[str, Any]:
    """``tilecc plan``: print (and with --json, write) what the job will need."""
    from tilecc.cc.planning import plan_job

    plan = plan_job(
        cc, opts.runtime.memory_budget, opts.runtime.staging, triples=opts.method == "ccsd(t)"
    )
    table = Table(title=f"{opts.method.upper()} / {opts.basis} on {opts.molecule.name}: plan")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    mb = 2**20
    table.add_row(
        "orbitals", f"{plan.spaces['occupied']} occupied, {plan.spaces['virtual']} virtual"
    )
    for name, size in sorted(plan.tensors.items(), key=lambda item: -item[1]):
        table.add_row(f"  {name}", f"{size / mb:.1f} MiB")
    table.add_row("tensors at once (an iteration)", f"{plan.tensors_peak_bytes / mb:.1f} MiB")
    table.add_row("DIIS history", f"{plan.diis_bytes / mb:.1f} MiB")
    table.add_row("integral transformation", f"{plan.integrals_batch_bytes / mb:.1f} MiB")
    table.add_row("AO integrals held", f"{plan.ao_integrals_bytes / mb:.1f} MiB")
    if plan.integral_file_bytes:
        table.add_row("integrals file (scratch)", f"{plan.integral_file_bytes / mb:.1f} MiB")
    table.add_row("process before CC", f"{plan.process_bytes / mb:.1f} MiB")
    if plan.triples_input_bytes:
        table.add_row("(T) inputs (this node)", f"{plan.triples_input_bytes / mb:.1f} MiB")
        table.add_row("(T) workers' scratch", f"{plan.triples_scratch_bytes / mb:.1f} MiB")
    table.add_row("peak memory", f"{plan.peak_memory_bytes / mb:.1f} MiB")
    table.add_row("memory budget", f"{plan.memory_budget_bytes / mb:.1f} MiB")
    table.add_row("iteration (cost model)", f"{plan.iteration_seconds:.2f} s")
    where = "in core" if plan.in_core else f"out of core ({plan.staging})"
    table.add_row("runs", where)
    if not plan.in_core:
        table.add_row("I/O per iteration", f"{plan.predicted_io_bytes / mb:.1f} MiB")
    show(table)
    for note in plan.notes:
        LOGGER.info(f"note: {note}")
    results = plan.as_dict()
    if opts.json is not None and mpi.world().leader:
        write_json_atomically(opts.json, results)
    return results


def run(
    opts: RunOptions, console: Console, interrupted: Callable[[], bool] = lambda: False
) -> dict[str, Any]:
    """Run the job; returns the results written to JSON (as an AtomicResult's ``extras``; see
    tilecc.qcschema). Raises ValueError for bad input and
    NotConvergedError (after writing the results) when the CC iterations did not converge."""
    from tilecc.cc import CCSD, DRCCD, GCCD, IterationRecord
    from tilecc.cc import checkpoint as ckpt
    from tilecc.host import molecule as host
    from tilecc.host.pyscf import chemical_core
    from tilecc.host.scf import SCFReport, mean_field, run_scf
    from tilecc.mpi import world

    validate(opts)
    LOGGER.info(banner(opts))
    timings: dict[str, float] = {}
    start = time.perf_counter()
    atoms = opts.atoms if opts.atoms is not None else host.read_xyz(opts.molecule)
    charge, spin = charge_and_spin(opts)
    mol = host.build_molecule(
        atoms,
        basis=opts.basis,
        charge=charge,
        spin=spin,
        symmetry=opts.symmetry,
        point_group=opts.point_group,
        cartesian=opts.cartesian,
        unit="bohr" if opts.bohr else "angstrom",
    )
    if opts.runtime.memory_budget:
        host.limit_memory(mol, opts.runtime.memory_budget)
    reference = opts.reference or ("rhf" if mol.spin == 0 else "uhf")
    if opts.semicanonical and (reference != "rohf" or opts.method not in ("ccsd", "ccsd(t)")):
        raise ValueError(
            "--semicanonical applies to ROHF-CCSD and ROHF-CCSD(T) only; leave it out or use "
            "--reference rohf."
        )
    if opts.method == "drccd" and reference != "rhf":
        raise ValueError(
            "drCCD is defined here for closed-shell RHF references; use --reference "
            "rhf with 2S = 0."
        )
    restart = opts.restart
    if restart and opts.checkpoint is not None and not opts.checkpoint.exists():
        LOGGER.info(
            f"no checkpoint at {escape(str(opts.checkpoint))} yet: starting from the beginning."
        )
        restart = False
    leader = world().leader  # on several ranks, rank 0 alone writes files
    if world().size > 1:
        # A launcher names a rank that dies by its process id: this line maps it to the rank.
        where = mpi.gather(f"{world().rank}: PID {os.getpid()} on {socket.gethostname()}")
        LOGGER.info(f"ranks {', '.join(where)}")
    if opts.checkpoint is not None and leader:
        # Refused now rather than after the SCF when another running job writes this checkpoint
        # (the solver holds the lock while it iterates).
        with exclusive_lock(opts.checkpoint, "checkpoint", wait=False):
            pass
    point_group = mol.groupname if mol.symmetry else "C1 (symmetry off)"
    LOGGER.info(
        f"[bold]{escape(opts.molecule.name)}[/bold]: {mol.natm} atoms, {mol.nelectron} "
        f"electrons, {mol.nao} {'Cartesian' if mol.cart else 'spherical'} basis functions "
        f"({escape(opts.basis)}{', with ECP' if mol.ecp else ''}), point group {point_group}, "
        f"E(nuc) {mol.energy_nuc():.10f} Eh"
    )
    LOGGER.info("geometry (Å, in the frame of the point group):")
    for atom, (x, y, z) in enumerate(mol.atom_coords(unit="Angstrom")):
        LOGGER.info(f"  {mol.atom_symbol(atom):<4s} {x:14.8f} {y:14.8f} {z:14.8f}")
    scf_start = time.perf_counter()
    if restart and opts.checkpoint is not None:
        # The reference is taken from the checkpoint, so that the restart continues on the very
        # orbitals (phases included) its amplitudes belong to.
        solution = ckpt.read_scf(opts.checkpoint, ckpt.molecule_identity(mol, reference))
        mf = solution.apply_to(mean_field(mol, reference))
        scf_report = SCFReport(strategy=f"read from the checkpoint {opts.checkpoint}")
    else:
        mf, scf_report = run_scf(mol, reference, scf_options(opts))
    scf_seconds = time.perf_counter() - scf_start
    timings["scf"] = time.perf_counter() - start
    stability = {True: ", stable", False: ", unstable", None: ""}[scf_report.stable]
    cycles = f", {scf_report.cycles} cycles" if scf_report.cycles else ""
    LOGGER.info(
        f"{reference.upper()} energy {mf.e_tot:.10f} Eh ({escape(scf_report.strategy)}"
        f"{cycles}{stability})"
    )
    for note in scf_report.notes:
        LOGGER.info(f"  SCF: {note}")

    mp2_guess = reference in ("rhf", "uhf") and opts.method != "drccd"
    iterations_shown = False

    def report_iteration(rec: IterationRecord) -> None:
        # A Ctrl-C that Python swallowed (it lands in a weakref callback now and then) still
        # stops the job, at the next iteration.
        if interrupted():
            raise KeyboardInterrupt
        nonlocal iterations_shown
        first_guess = cc.e_first_guess  # cc: the solver below, iterating
        if rec.cycle == 1 and first_guess is not None and mp2_guess:
            # The first-guess amplitudes are MP2's on canonical orbitals: its energy comes free.
            LOGGER.info(
                f"MP2 correlation energy = {first_guess:.12f}, MP2 total energy = "
                f"{mf.e_tot + first_guess:.12f}"
            )
        if not iterations_shown:
            LOGGER.info("  cycle  E(corr) / Eh        ΔE / Eh     |Δt|        time")
            iterations_shown = True
        LOGGER.info(
            f"  {rec.cycle:3d}  {rec.e_corr:+.12f}  {rec.delta_e:+.3e}  "
            f"{rec.residual_norm:.3e}  {rec.seconds:6.2f} s"
        )

    # CCSD and CCSD(T) take the spin-adapted path for RHF references, spin orbitals otherwise.
    kind: Any = {"ccsd": CCSD, "ccsd(t)": CCSD, "ccd": GCCD, "drccd": DRCCD}[opts.method]
    if opts.frozen is not None:
        frozen = opts.frozen
    else:
        frozen = 0 if opts.frozen_core is False else chemical_core(mol)
    extra: dict[str, Any] = {}
    if opts.grid is not None:
        extra["grid"] = opts.grid
    if reference == "rohf" and (opts.method == "ccsd(t)" or opts.semicanonical):
        # The standard ROHF-CCSD(T): CCSD and (T) on the semicanonical orbitals.
        extra["semicanonical"] = True
        LOGGER.info(f"{opts.method.upper()} on semicanonical ROHF orbitals")

    for line in orbital_lines(mf, frozen):
        LOGGER.info(line)
    from tilecc.context import _default_threads

    threads = opts.runtime.threads or _default_threads()
    opts, configuration = configure(opts, *problem_class(opts, mf, frozen, reference, threads))

    def solver(store: str, memory_budget: int | None, **overrides: Any) -> Any:
        """The CC solver of the job, on ``store``; ``overrides`` replace its keyword arguments
        (tilecc tune's configurations)."""
        arguments = dict(
            frozen=frozen,
            tile=opts.tile,
            threads=opts.runtime.threads,
            conv_tol=opts.conv_tol,
            conv_tol_normt=opts.conv_tol_normt,
            max_cycle=opts.max_iter,
            callback=report_iteration,
            checkpoint=opts.checkpoint,
            restart=restart,
            policy=opts.runtime.policy,
            quantum=opts.runtime.quantum,
            group_size=opts.runtime.group_size,
            refine=opts.runtime.refine,
            trace=opts.trace is not None,
            store=store,
            memory_budget=memory_budget,
            staging=opts.runtime.staging,
            scratch=opts.runtime.scratch,
            keep_scratch=opts.runtime.keep_scratch,
            placement=opts.runtime.placement,
            workq=opts.runtime.workq,
            **extra,
        )
        return kind(mf, **(arguments | overrides))

    # The job's plans at each tile the cost model compares, kept for the in-core decision below.
    plans: dict[int, Any] = {}
    if configuration["source"] == "default" and "tile" not in opts.chosen and world().size == 1:
        from tilecc import tune
        from tilecc.cc.planning import plan_job

        def predict(tile: int) -> float:
            plans[tile] = plan_job(
                solver("none", None, tile=tile), opts.runtime.memory_budget, opts.runtime.staging
            )
            return float(plans[tile].iteration_seconds)

        tile, predicted = tune.predicted_tile(predict, opts.tile)
        opts = replace(opts, tile=tile)
        configuration.update(
            tile=tile,
            source="predicted",
            predicted_by="cost model",
            predicted_iteration_seconds={str(t): s for t, s in predicted.items()},
        )
    LOGGER.info(
        f"configuration: tile {configuration['tile']}, quantum {configuration['quantum']}, "
        f"policy {configuration['policy']} ({configuration['source']}"
        + (f" by the {configuration['predicted_by']})" if "predicted_by" in configuration else ")")
    )

    if opts.plan_only:
        # A plan's tensors have no blocks and no budget: the plan weighs them against it.
        return show_plan(opts, solver("none", None))
    if opts.tune is not None:
        from tilecc.tune_command import show_tuning

        store, budget = opts.runtime.store, opts.runtime.memory_budget
        return show_tuning(
            lambda **overrides: solver(store, budget, **overrides), opts.tune, configuration
        )
    if opts.simulate is not None:
        from tilecc.simulate.command import show_simulation

        return show_simulation(
            solver("none", None),
            opts.simulate,
            opts.runtime,
            opts.json,
            triples=opts.method == "ccsd(t)",
        )
    store, budget = opts.runtime.store, opts.runtime.memory_budget
    if not opts.store_chosen and world().size == 1:
        from tilecc.cc.planning import plan_job

        plan = plans.get(opts.tile) or plan_job(solver("none", None), budget, opts.runtime.staging)
        if not plan.in_core:
            store, budget = "disk", plan.memory_budget_bytes
            LOGGER.info(
                f"the job needs {show_bytes(plan.allocated_bytes)}, more than its memory budget "
                f"of {show_bytes(budget)}: it runs out of core (--store disk, "
                f"{opts.runtime.staging} staging)."
            )
    cc = solver(store, budget)
    # The SCF ran before the solver's context existed: its span goes onto the trace now.
    cc.context.add_span("SCF", scf_start, scf_seconds)
    cc_start = time.perf_counter()
    with warnings.catch_warnings():
        # Reported below, as a result; every other warning (wisdom, SCF) reaches the user.
        warnings.filterwarnings("ignore", message=".*did not converge", category=RuntimeWarning)
        cc.run()
    timings["cc"] = time.perf_counter() - cc_start - cc.context.stats.inspector_seconds
    timings["inspector"] = cc.context.stats.inspector_seconds
    if opts.method == "ccsd(t)" and cc.converged:
        t_start = time.perf_counter()
        # A bar on a terminal; a line per tenth of the work in the log file and in a log
        # that is not a terminal (the terminal's handler drops the lines its bar shows).
        with Progress(
            TextColumn("  (T)"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("first occupied indices"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=not (console.is_terminal and LOGGER.isEnabledFor(logging.INFO)),
        ) as bar:
            task = bar.add_task("(T)", total=None)
            tenths = 0

            def advance(done: int, total: int) -> None:
                nonlocal tenths
                if interrupted():
                    raise KeyboardInterrupt
                bar.update(task, completed=done, total=total)
                if 10 * done // total > tenths:
                    tenths = 10 * done // total
                    LOGGER.info(
                        f"  (T) {done}/{total} first occupied indices, "
                        f"{time.perf_counter() - t_start:.1f} s",
                        extra={"progress": True},
                    )

            cc.ccsd_t(progress=advance)
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
        "semicanonical": bool(getattr(problem, "semicanonical", False)),
        "charge": charge,
        "spin": spin,
        "frozen_orbitals": [list(orbitals) for orbitals in problem.frozen],
        "cartesian": bool(mol.cart),
        "ecp": sorted(mol.ecp) if mol.ecp else [],
        "symmetry": bool(mol.symmetry),
        "point_group": mol.groupname if mol.symmetry else "C1",
        "nuclear_repulsion": float(mol.energy_nuc()),
        "scf": {
            "strategy": scf_report.strategy,
            "cycles": scf_report.cycles,
            "stable": scf_report.stable,
            "notes": scf_report.notes,
        },
        "tile": opts.tile,
        "configuration": configuration,
        "threads": cc.context.threads,
        "e_scf": float(mf.e_tot),
        "e_corr": float(cc.e_corr),
        "e_t": cc.e_t,
        # SCF + the CC iterations' correlation energy, without (T).
        "e_cc_tot": float(cc.e_tot),
        # The total energy of the method asked for, (T) included for ccsd(t).
        "e_tot": float(cc.e_tot) + (cc.e_t or 0.0),
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
            "triples": stats.triples_flops,
            "tasks": stats.tasks,
            "plans_built": stats.plans_built,
            "plans_reused": stats.plans_reused,
        },
        "runtime": runtime_summary(cc.context),
        # drCCD on a processor grid: the grid over (i, a, j, b) and each node's box of it.
        "grid": (
            {"kind": opts.grid, "grid": list(ring.grid), "node_grid": list(ring.node_grid)}
            if (ring := getattr(cc, "ring_grid", None)) is not None
            else None
        ),
        "memory": {
            **cc.context.runtime.memory,
            # Each worker's scratch: allocations and high-water mark (paper 000's Figs. 13-15).
            "scratch_mode": cc.context.executor.scratch_mode,
            "workers": cc.context.executor.worker_scratch,
        },
        "io": cc.context.io,
        **per_rank(cc.context),
    }
    table = Table(title=f"{opts.method.upper()} / {opts.basis} on {opts.molecule.name}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row(f"E({reference.upper()})", f"{mf.e_tot:.10f} Eh")
    label = "CCSD" if opts.method == "ccsd(t)" else opts.method.upper()
    table.add_row(f"E(corr, {label})", f"{cc.e_corr:.10f} Eh")
    if cc.e_t is not None:
        table.add_row("E(T)", f"{cc.e_t:.10f} Eh")
    table.add_row("E(total)", f"{results['e_tot']:.10f} Eh")
    table.add_row("converged", f"{cc.converged} after {cc.cycles} iterations")
    table.add_row(
        "t2 stored / dense elements", f"{t2['stored_elements']:,} / {t2['dense_elements']:,}"
    )
    table.add_row("executed / dense flops", f"{stats.flops:.3g} / {stats.dense_flops:.3g}")
    table.add_row(
        "time: SCF / CC / inspector",
        f"{timings['scf']:.2f} / {timings['cc']:.2f} / {timings['inspector']:.3f} s",
    )
    show(table)
    if getattr(cc, "t1", None) is not None:
        from tilecc.cc import diagnostics

        found = diagnostics.diagnostics(cc.t1, cc.t2, mf)
        results["diagnostics"] = found.as_dict()
        for line in diagnostics.lines(found):
            LOGGER.info(line)
    if opts.timings:
        show(decomposition_table(cc.context))
    else:
        show(decomposition_table(cc.context), logging.DEBUG)
    if opts.trace is not None:
        try:
            cc.context.write_trace(opts.trace)  # every rank gives its part; rank 0 writes
            LOGGER.info(f"trace written to {escape(str(opts.trace))} (open it in ui.perfetto.dev)")
        except OSError as exc:
            LOGGER.error(
                f"[red]tilecc: cannot write the trace {escape(str(opts.trace))} "
                f"({escape(exc.strerror or str(exc))}); the results are kept.[/red]"
            )
    if opts.json is not None and leader:
        from tilecc import qcschema

        failure = None if cc.converged else not_converged(opts)
        result = qcschema.atomic_result(
            mol=mol,
            mf=mf,
            cc=cc,
            method=opts.method,
            basis=opts.basis,
            scf_cycles=scf_report.cycles,
            extras=results,
            given=opts.qcschema,
            error=failure,
        )
        keep_results(opts.json, result, console)
    if cc.converged:
        for line in final_lines(opts.method, reference, float(mf.e_tot), cc.e_corr, cc.e_t):
            LOGGER.log(RESULT, line)
    if not cc.converged:
        raise NotConvergedError(not_converged(opts))
    return results


def not_converged(opts: RunOptions) -> str:
    return (
        f"{opts.method.upper()} did not converge in {opts.max_iter} iterations; the last "
        f"energies were written. Raise --max-iter or loosen --conv-tol."
    )
