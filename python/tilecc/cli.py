"""The ``tilecc`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table


def _info(args: argparse.Namespace, console: Console) -> int:
    from tilecc import info

    table = Table(title="tilecc info", show_header=False)
    table.add_column("item", style="bold")
    table.add_column("value")
    for key, value in info.collect().items():
        table.add_row(key, value)
    console.print(table)
    return 0


def _demo(args: argparse.Namespace, console: Console) -> int:
    from tilecc import demo

    error = demo.run(console, threads=args.threads)
    if error > 1e-10:
        console.print(f"[red]tilecc and numpy.einsum disagree by {error:.3g}[/red]")
        return 1
    console.print("[green]tilecc agrees with numpy.einsum.[/green]")
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilecc", description="Block-sparse tensor contractions for coupled-cluster methods."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("info", help="version, BLAS, kernels, threads and build options")
    p.set_defaults(handler=_info)
    p = sub.add_parser("demo", help="run and check a demonstration contraction")
    p.add_argument("--threads", type=_positive_int, default=None, help="worker threads")
    p.set_defaults(handler=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console()
    try:
        return int(args.handler(args, console))
    except (ValueError, MemoryError, OSError) as exc:
        console.print(f"[red]tilecc: {exc}[/red]", highlight=False)
        return 2


if __name__ == "__main__":
    sys.exit(main())
