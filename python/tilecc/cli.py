"""The ``tilecc`` command."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tilecc import _core, log
from tilecc.log import LOGGER
from tilecc.options import MAX_THREADS, RuntimeOptions, add_arguments, whole_number
from tilecc.tune import duration
from tilecc.tune_command import POLICIES, QUANTA, TILES

if TYPE_CHECKING:
    from tilecc.run import RunOptions


def _info(args: argparse.Namespace, console: Console) -> int:
    from tilecc import info

    table = Table(title="tilecc info", show_header=False)
    table.add_column("item", style="bold")
    table.add_column("value")
    collected = info.collect()
    for key, value in collected.items():
        table.add_row(key, escape(value))
    console.print(table)
    if "problem" in collected:
        console.print(f"[red]tilecc: {escape(collected['problem'])}[/red]", highlight=False)
        return 2
    return 0


def _demo(args: argparse.Namespace, console: Console) -> int:
    from tilecc import demo

    error = demo.run(console, threads=args.threads)
    if error > 1e-10:
        console.print(f"[red]tilecc and numpy.einsum disagree by {error:.3g}[/red]")
        return 1
    console.print("[green]tilecc agrees with numpy.einsum.[/green]")
    return 0


def _job_options(
    args: argparse.Namespace, plan_only: bool, simulate: Any = None, tune: Any = None
) -> RunOptions:
    from tilecc.run import RunOptions

    if args.qcschema is not None:
        return _qcschema_options(args, plan_only, simulate, tune)
    if args.molecule is None:
        raise ValueError(
            "no molecule given: name an XYZ file, or a QCSchema input with --qcschema."
        )
    if args.basis is None:
        raise ValueError("no basis set given: add --basis NAME (e.g. --basis cc-pvdz).")
    return RunOptions(
        molecule=args.molecule,
        basis=args.basis,
        method=args.method or "ccsd",
        charge=args.charge,
        spin=args.spin,
        reference=args.reference,
        frozen=args.frozen,
        frozen_core=args.frozen_core,
        symmetry=args.symmetry,
        point_group=args.point_group,
        cartesian=args.cartesian,
        semicanonical=args.semicanonical,
        grid=args.grid,
        scf_conv=args.scf_conv,
        scf_max_iter=args.scf_max_iter,
        scf_guess=args.scf_guess,
        scf_chkfile=args.scf_chkfile,
        stability=args.stability,
        tile=args.tile if args.tile is not None else RunOptions.tile,
        chosen=frozenset(
            name for name in ("tile", "quantum", "policy") if getattr(args, name) is not None
        ),
        runtime=RuntimeOptions.from_args(args),
        conv_tol=args.conv_tol,
        conv_tol_normt=args.conv_tol_normt,
        max_iter=args.max_iter,
        json=args.json,
        checkpoint=args.checkpoint,
        restart=args.restart,
        bohr=args.bohr,
        trace=args.trace,
        timings=args.timings,
        plan_only=plan_only,
        simulate=simulate,
        tune=tune,
        store_chosen=args.store is not None,
    )


def _qcschema_options(
    args: argparse.Namespace, plan_only: bool, simulate: Any, tune: Any
) -> RunOptions:
    """A job from a QCSchema AtomicInput: its molecule, basis, method and keywords; the other
    options (threads, runtime, output files) from the command line."""
    import dataclasses

    from tilecc import qcschema

    given = {
        "MOLECULE": args.molecule,
        "--basis": args.basis,
        "--method": args.method,
        "--charge": args.charge,
        "--spin": args.spin,
        "--bohr": args.bohr or None,
    }
    both = [flag for flag, value in given.items() if value is not None]
    if both:
        raise ValueError(
            f"--qcschema gives the molecule, basis, method, charge and spin; leave out "
            f"{', '.join(both)}."
        )
    job = qcschema.read_input(args.qcschema)
    args.molecule, args.basis, args.method = args.qcschema, job.basis, job.method
    args.charge, args.spin, args.bohr = job.charge, job.spin, True
    opts = _job_options(
        argparse.Namespace(**{**vars(args), "qcschema": None}), plan_only, simulate, tune
    )
    return dataclasses.replace(opts, atoms=job.atoms, qcschema=job.schema, **job.keywords)


def _run(args: argparse.Namespace, console: Console) -> int:
    from tilecc.run import NotConvergedError, ResultsNotWrittenError, run

    try:
        run(_job_options(args, False), console, interrupted=_interrupted.is_set)
    except ResultsNotWrittenError as exc:
        LOGGER.error(f"[red]tilecc: {escape(str(exc))}[/red]")
        return 4
    except NotConvergedError as exc:
        LOGGER.error(f"[red]tilecc: {escape(str(exc))}[/red]")
        return 3
    return 0


def _plan(args: argparse.Namespace, console: Console) -> int:
    from tilecc.run import run

    run(_job_options(args, True), console, interrupted=_interrupted.is_set)
    return 0


def _simulate(args: argparse.Namespace, console: Console) -> int:
    from tilecc.run import run
    from tilecc.simulate import load_platform, ranks_on
    from tilecc.simulate.command import SimulateOptions

    # The platform, the rank layout and the chart's library are checked before the SCF runs.
    ranks_on(load_platform(args.platform), args.ranks, args.ranks_per_node)
    if args.png is not None:
        from tilecc.report import check_charts_available

        check_charts_available()
    sim = SimulateOptions(
        ranks=args.ranks,
        ranks_per_node=args.ranks_per_node,
        platform=args.platform,
        latency_us=args.latency_us,
        gbps=args.gbps,
        png=args.png,
    )
    run(_job_options(args, False, sim), console, interrupted=_interrupted.is_set)
    return 0


def _tune(args: argparse.Namespace, console: Console) -> int:
    from tilecc.run import run
    from tilecc.tune_command import TuneOptions

    unknown = [name for name in args.policies if name not in _core.policy_names()]
    if unknown:
        raise ValueError(
            f"unknown policy {unknown[0]!r} in --policies; valid ones are: "
            f"{', '.join(_core.policy_names())}."
        )
    from tilecc.files import check_outputs

    inputs = {"molecule file": args.molecule, "QCSchema input": args.qcschema}
    check_outputs(inputs, {"tuning results file": args.json, "chart": args.png})
    if args.png is not None:
        from tilecc.report import check_charts_available

        check_charts_available()
    tune = TuneOptions(args.budget, args.tiles, args.quanta, args.policies, args.json, args.png)
    # The job's own --json is the tuning's: the job itself does not run.
    run(_job_options(argparse.Namespace(**{**vars(args), "json": None}), False, tune=tune), console)
    return 0


def _report(args: argparse.Namespace, console: Console) -> int:
    from tilecc import report

    report.run(args.trace, args.png, console)
    return 0


#: Counts the core keeps in C ints (tile sizes, iterations).
_INT_MAX = 2**31 - 1
_positive_int = whole_number(1, _INT_MAX)
_thread_count = whole_number(1, MAX_THREADS)


_whole_number = whole_number(0, _INT_MAX)


def _job_arguments(p: argparse.ArgumentParser) -> None:
    """The options of a job, shared by ``run`` and ``plan``."""
    p.add_argument(
        "molecule",
        type=Path,
        nargs="?",
        help="XYZ file (Ångström; --bohr for Bohr); a comment line such as '0 2' or "
        "'charge=0 multiplicity=2' sets the charge and multiplicity",
    )
    p.add_argument(
        "--qcschema",
        type=Path,
        metavar="INPUT.json",
        help="run the QCSchema AtomicInput in this file (molecule, basis, method and keywords; "
        "instead of MOLECULE, --basis and --method)",
    )
    p.add_argument(
        "--basis",
        help="basis set known to PySCF (e.g. cc-pvdz; def2-*, LANL2DZ and cc-pVnZ-PP bring "
        "their effective core potentials), or an NWChem-format basis file",
    )
    p.add_argument(
        "--method",
        type=str.lower,
        help="ccd, ccsd (default), ccsd(t) or drccd",
    )
    p.add_argument(
        "--charge", type=int, default=None, help="default: the XYZ comment line's, else 0"
    )
    p.add_argument(
        "--spin",
        type=int,
        default=None,
        help="2S = N(alpha) - N(beta); default: from the XYZ comment line's multiplicity, else 0",
    )
    p.add_argument(
        "--reference",
        choices=["rhf", "uhf", "rohf"],
        help="default: rhf for closed shells, uhf otherwise",
    )
    p.add_argument(
        "--frozen-core",
        dest="frozen_core",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="freeze the chemical core (default: on)",
    )
    p.add_argument(
        "--frozen",
        type=_whole_number,
        default=None,
        metavar="N",
        help="freeze the N lowest orbitals (instead of the chemical core)",
    )
    p.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="use point-group symmetry (default: on)",
    )
    p.add_argument(
        "--point-group",
        default=None,
        metavar="NAME",
        help="run in this D2h subgroup (D2h, C2h, C2v, D2, Cs, Ci, C2, C1) rather than the "
        "molecule's largest",
    )
    p.add_argument("--cartesian", action="store_true", help="Cartesian basis functions (6d, 10f)")
    p.add_argument(
        "--semicanonical",
        action="store_true",
        help="ROHF: iterate on semicanonical orbitals (always so for ccsd(t))",
    )
    p.add_argument(
        "--grid",
        choices=("default", "node-aware"),
        default=None,
        help="drccd under mpiexec: lay the ring terms' tensors out on a processor grid, each node "
        "a box of it numbered node-obliviously (default) or chosen to move the fewest words "
        "between nodes (node-aware); tasks run where their output block lives",
    )
    scf = p.add_argument_group("SCF")
    scf.add_argument(
        "--scf-conv", type=float, default=1e-10, help="SCF energy threshold (Eh), default 1e-10"
    )
    scf.add_argument("--scf-max-iter", type=_positive_int, default=100, help="default 100")
    scf.add_argument(
        "--scf-guess",
        default="minao",
        help="initial guess: minao (default), atom, huckel, 1e or vsap",
    )
    scf.add_argument(
        "--scf-chkfile",
        type=Path,
        default=None,
        help="start from the orbitals of this PySCF chkfile (a converged one takes 1-2 cycles)",
    )
    scf.add_argument(
        "--stability",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="check that the SCF solution is a minimum and leave it if not (default: on)",
    )
    p.add_argument(
        "--tile",
        type=_positive_int,
        default=None,
        help="tile size (orbitals; default: the tuned one for this machine and problem class "
        "when tilecc tune has run, else 16)",
    )
    p.add_argument("--conv-tol", type=float, default=1e-8, help="energy change threshold (Eh)")
    p.add_argument(
        "--conv-tol-normt", type=float, default=1e-6, help="amplitude residual norm threshold"
    )
    p.add_argument("--max-iter", type=_positive_int, default=50)
    p.add_argument("--json", type=Path, help="write the results here (atomically)")
    p.add_argument(
        "--checkpoint",
        type=Path,
        help="write amplitudes and DIIS state here after every iteration (atomically)",
    )
    p.add_argument("--restart", action="store_true", help="continue from --checkpoint")
    p.add_argument("--bohr", action="store_true", help="coordinates are in Bohr")
    add_arguments(p)
    output = p.add_argument_group("output")
    output.add_argument(
        "--trace",
        type=Path,
        help="write a Chrome/Perfetto trace of every contraction here (gzipped if it ends in .gz)",
    )
    output.add_argument(
        "--timings",
        action="store_true",
        help="print where the runtime's time went, per contraction (always in --json)",
    )
    output.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="write the log to this file as well (plain text)",
    )
    output.add_argument(
        "-v", "--verbose", action="store_true", help="more detail: the runtime's decomposition"
    )
    output.add_argument(
        "-q", "--quiet", action="store_true", help="only the final energies, warnings and errors"
    )


class _HelpWithDefaults(argparse.HelpFormatter):
    """Help that names every option's default: those its text does not name already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        quiet = action.default in (None, False, argparse.SUPPRESS) or not action.option_strings
        if quiet or "default" in text:
            return action.help
        return f"{text} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilecc", description="Block-sparse tensor contractions for coupled-cluster methods."
    )
    parser.add_argument("--version", action="version", version=f"tilecc {_core.version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=summary, formatter_class=_HelpWithDefaults)

    p = command("info", "version, BLAS, kernels, threads and build options")
    p.set_defaults(handler=_info)
    p = command("run", "a coupled-cluster calculation on a molecule")
    _job_arguments(p)
    p.set_defaults(handler=_run)
    p = command(
        "plan",
        "what a run would need (memory, time per iteration, in core or out, I/O), "
        "without running CC",
    )
    _job_arguments(p)
    p.set_defaults(handler=_plan)
    p = command(
        "simulate",
        "an iteration of the job on many ranks, predicted from its real plans (no CC run)",
    )
    _job_arguments(p)
    p.add_argument("--ranks", type=_positive_int, required=True, help="ranks to simulate")
    p.add_argument(
        "--ranks-per-node",
        type=_positive_int,
        default=None,
        help="ranks per node (default: the platform's)",
    )
    p.add_argument(
        "--platform",
        default="infiniband",
        help="a bundled platform (infiniband, ethernet) or a JSON file (default: infiniband)",
    )
    p.add_argument(
        "--latency-us", type=float, default=None, help="latency between nodes, microseconds"
    )
    p.add_argument("--gbps", type=float, default=None, help="bandwidth between nodes, GB/s")
    p.add_argument(
        "--png", type=Path, default=None, help="draw the strong-scaling curve here (.png/.svg/.pdf)"
    )
    p.set_defaults(handler=_simulate)
    p = command(
        "tune",
        "find the tile, quantum and policy that run the job's iterations fastest here, and "
        "keep them for tilecc run",
    )
    _job_arguments(p)
    p.add_argument(
        "--budget",
        type=duration,
        default=300.0,
        help="time to spend exploring, e.g. 90s, 5m, 1h (default: 5m)",
    )
    p.add_argument(
        "--tiles", type=_positive_int, nargs="+", default=list(TILES), help="tile sizes to try"
    )
    p.add_argument(
        "--quanta", type=_positive_int, nargs="+", default=list(QUANTA), help="quanta to try"
    )
    p.add_argument("--policies", nargs="+", default=list(POLICIES), help="policies to try")
    p.add_argument(
        "--png",
        type=Path,
        default=None,
        help="draw seconds per iteration over tile x quantum here (.png, .svg or .pdf)",
    )
    p.set_defaults(handler=_tune)
    p = command("report", "time decomposition and charts from a trace")
    p.add_argument("trace", type=Path, help="a trace written by tilecc run --trace")
    p.add_argument(
        "--png",
        type=Path,
        help="draw the worker timeline and load balance here (.png, .svg or .pdf, by the name)",
    )
    p.set_defaults(handler=_report)
    p = command("demo", "run and check a demonstration contraction")
    p.add_argument("--threads", type=_thread_count, default=None, help="worker threads")
    p.set_defaults(handler=_demo)
    return parser


#: Set by Ctrl-C; the job checks it between iterations, since Python ignores a KeyboardInterrupt
#: raised inside a finaliser or weakref callback.
_interrupted = threading.Event()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from tilecc.mpi import launched_rank, world

    # Only rank 0 of an MPI job prints (and writes results); with results on standard output
    # (--json -), the log goes to standard error.
    try:
        leader = world().leader
    except ValueError as exc:
        leader = launched_rank() == 0
        failure: ValueError | None = exc
    else:
        failure = None
    console = Console(stderr=str(getattr(args, "json", "")) == "-", quiet=not leader)
    if failure is not None:
        console.print(f"[red]tilecc: {escape(str(failure))}[/red]", highlight=False)
        return 2

    def show(message: Warning | str, *_: object, **__: object) -> None:
        LOGGER.warning(f"[yellow]tilecc: warning: {escape(str(message))}[/yellow]")

    warnings.showwarning = show

    def interrupt(signum: int, frame: object) -> None:
        _interrupted.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        level = log.level_of(getattr(args, "verbose", False), getattr(args, "quiet", False))
        output = _log_file(args)
        with log.logging_to(console, level, output):
            return _handle(args, console)
    except ValueError as exc:  # the log's own options
        console.print(f"[red]tilecc: {escape(str(exc))}[/red]", highlight=False, soft_wrap=True)
        return 2


def _log_file(args: argparse.Namespace) -> Path | None:
    """The -o file, refused before it is opened (and emptied) if it is an input or another
    output."""
    output: Path | None = getattr(args, "output", None)
    if output is not None:
        from tilecc.files import check_outputs

        check_outputs(
            {
                "molecule file": args.molecule,
                "QCSchema input": args.qcschema,
                "SCF chkfile": args.scf_chkfile,
            },
            {
                "log file": output,
                "JSON results file": args.json,
                "trace file": args.trace,
                "checkpoint": args.checkpoint,
            },
        )
    return output


def _handle(args: argparse.Namespace, console: Console) -> int:
    """The command's handler, its bad input and interruptions ended in one sentence."""
    try:
        code = int(args.handler(args, console))
        if _interrupted.is_set():  # Python swallowed the KeyboardInterrupt, and the job finished
            raise KeyboardInterrupt
        return code
    except (ValueError, MemoryError, OSError) as exc:
        LOGGER.error(f"[red]tilecc: {escape(str(exc))}[/red]")
        return 2
    except KeyboardInterrupt:
        LOGGER.error(
            "[red]tilecc: interrupted; the last checkpoint written, if any, is intact.[/red]"
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
