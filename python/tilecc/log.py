"""The log of a command: Python logging, printed through rich on the terminal and, with
``-o FILE``, written to a file as well (plain text, as Psi4's output.dat).

Levels: DEBUG (``-v``) adds the runtime's details; INFO is the default; RESULT (``-q``) keeps
only the final energies, warnings and errors. A table or other rich renderable is logged as
``LOGGER.info("", extra={"renderable": table})``; a progress line that a live bar on the
terminal already shows as ``extra={"progress": True}``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

LOGGER = logging.getLogger("tilecc")
#: The final energies and the termination line: what ``-q`` still shows.
RESULT = logging.INFO + 5
logging.addLevelName(RESULT, "RESULT")

#: The width of the log file's lines (tables included); the terminal uses its own.
FILE_WIDTH = 120


class _Handler(logging.Handler):
    """Prints each record's message (rich markup) or renderable on a rich console, as written:
    no time, level or path columns, and no padding. A file's lines are not wrapped."""

    def __init__(self, console: Console, level: int, live_bar: bool) -> None:
        super().__init__(level=level)
        self.console = console
        self.live_bar = live_bar

    def emit(self, record: logging.LogRecord) -> None:
        if self.live_bar and getattr(record, "progress", False):
            return  # the bar on this terminal shows it
        try:
            renderable = getattr(record, "renderable", None)
            if renderable is not None:
                self.console.print(renderable)
            else:
                wrap = not self.console.is_terminal
                self.console.print(record.getMessage(), highlight=False, soft_wrap=wrap)
        except Exception:
            self.handleError(record)


def level_of(verbose: bool, quiet: bool) -> int:
    """The level ``-v`` / ``-q`` ask for; both is refused."""
    if verbose and quiet:
        raise ValueError("-v and -q ask for more and for less output; give one of them.")
    return logging.DEBUG if verbose else RESULT if quiet else logging.INFO


@contextlib.contextmanager
def logging_to(console: Console, level: int, output: Path | None = None) -> Iterator[None]:
    """Send the log to ``console`` and, if given, to the file ``output`` (leader only: the
    console of another rank is quiet and it writes no file) for the duration."""
    handlers: list[logging.Handler] = [_Handler(console, level, live_bar=console.is_terminal)]
    with contextlib.ExitStack() as stack:
        if output is not None and not console.quiet:
            try:
                stream = stack.enter_context(output.open("w", encoding="utf-8"))
            except OSError as exc:
                raise ValueError(
                    f"cannot write the log file {output}: {exc.strerror or exc}; give a "
                    f"writable path to -o."
                ) from None
            file_console = Console(file=stream, width=FILE_WIDTH, color_system=None, soft_wrap=True)
            handlers.append(_Handler(file_console, level, live_bar=False))
        for handler in handlers:
            LOGGER.addHandler(handler)
        LOGGER.setLevel(level)
        LOGGER.propagate = False
        try:
            yield
        finally:
            for handler in handlers:
                LOGGER.removeHandler(handler)


def show(renderable: Any, level: int = logging.INFO) -> None:
    """Log a rich renderable (a table, a chart) at ``level``."""
    LOGGER.log(level, "", extra={"renderable": renderable})
