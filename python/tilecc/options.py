"""The runtime options, defined once: the command line's flags (with help generated from the
registries of policies and stores), the keyword arguments of :class:`tilecc.Context` and of the
CC classes, and their validation all come from :class:`RuntimeOptions`.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from tilecc import _core
from tilecc.placement import PLACEMENTS
from tilecc.staging import SCHEDULES

#: The most worker threads an executor takes (include/tilecc/exec.hpp checks the same).
MAX_THREADS = 1024


@dataclass(frozen=True)
class RuntimeOptions:
    """How tensors run.

    Attributes:
        threads: worker threads; None takes $TILECC_THREADS, else every available core.
        policy: the scheduling policy, by registered name (``_core.policy_names()``).
        quantum: tasks taken per counter fetch (for ``buckets``, the fewest per chunk).
        group_size: workers per bucket; None: one group per NUMA domain or core pair.
        refine: schedule each run of a plan with the task times measured in its last run.
        trace: keep every phase slice, for a Chrome/Perfetto trace.
        store: where blocks live, by registered name (``_core.store_names()``).
        memory_budget: bytes the tensors may hold at once (per rank); None: no limit. A job
            that would go over it stops, before it allocates, with one sentence. With the
            ``disk`` store, the bytes of blocks held in memory at once.
        staging: how contractions of tensors in the ``disk`` store move their blocks through a
            memory budget, by name (``tilecc.staging.SCHEDULES``).
        scratch: the directory the ``disk`` store's files go in; None: $TILECC_SCRATCH, else a
            new temporary directory.
        keep_scratch: leave the ``disk`` store's files when the job ends.
        placement: on several ranks, which rank runs each task of a contraction, by name
            (``tilecc.placement.PLACEMENTS``), computed once per plan; None: the policy decides
            (its counter, or each rank's LPT share).
        workq: on several ranks, WorkQ (paper 003): each rank's courier thread fetches the
            blocks of up to this many of its tasks ahead of its workers; 0: off.
    """

    threads: int | None = None
    policy: str = "counter"
    quantum: int = 1
    group_size: int | None = None
    refine: bool = True
    trace: bool = False
    store: str = "memory"
    memory_budget: int | None = None
    staging: str = "two-level"
    scratch: str | None = None
    keep_scratch: bool = False
    placement: str | None = None
    workq: int = 0

    def check(self) -> RuntimeOptions:
        """Refuse a bad option with one sentence naming it and the valid values; returns self."""
        if self.threads is not None:
            check_whole(self.threads, "threads", 1, MAX_THREADS)
        check_whole(self.quantum, "quantum (tasks per counter fetch)", 1, 2**31 - 1)
        if self.group_size is not None:
            check_whole(self.group_size, "group_size (workers per bucket)", 1, MAX_THREADS)
        for name, value, valid in (
            ("scheduling policy", self.policy, _core.policy_names()),
            ("block store", self.store, _core.store_names()),
        ):
            if value not in valid:
                raise ValueError(f"unknown {name} {value!r}; valid ones are: {', '.join(valid)}.")
        if self.memory_budget is not None:
            check_whole(self.memory_budget, "memory_budget (bytes)", 1)
        if self.staging not in SCHEDULES:
            raise ValueError(
                f"unknown staging {self.staging!r}; valid ones are: {', '.join(SCHEDULES)}."
            )
        if self.scratch is not None:
            check_scratch(self.scratch)
        check_whole(self.workq, "workq (tasks a courier fetches ahead)", 0, 2**31 - 1)
        if self.placement is not None and self.placement not in PLACEMENTS:
            raise ValueError(
                f"unknown placement {self.placement!r}; valid ones are: {', '.join(PLACEMENTS)}."
            )
        for name in ("refine", "trace", "keep_scratch"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}.")
        return self

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, holder: Any) -> RuntimeOptions:
        """The options an object keeps as attributes of the same names (a Context, a CC
        solver), so that each keeps them as keyword arguments without repeating this list."""
        return cls(**{name: getattr(holder, name) for name in cls.names()})

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RuntimeOptions:
        """The options the command line gave (see :func:`add_arguments`)."""
        return cls(
            threads=args.threads,
            policy=args.policy if args.policy is not None else cls().policy,
            quantum=args.quantum if args.quantum is not None else cls().quantum,
            group_size=args.group_size,
            refine=args.refine,
            trace=getattr(args, "trace", None) is not None,
            store=args.store or default_store(),
            memory_budget=args.memory_budget,
            staging=args.staging,
            scratch=args.scratch,
            keep_scratch=args.keep_scratch,
            placement=args.placement,
            workq=args.workq,
        ).check()

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}


def default_store() -> str:
    return RuntimeOptions().store


def check_scratch(path: str) -> None:
    """One sentence unless ``path`` is a directory this process can write files in."""
    where = os.fspath(path)
    if not os.path.isdir(where):
        raise ValueError(
            f"the scratch directory {where} does not exist or is not a directory; create it "
            f"or give --scratch another one."
        )
    if not os.access(where, os.W_OK | os.X_OK):
        raise ValueError(
            f"the scratch directory {where} is not writable; give --scratch a directory you "
            f"can write in."
        )


def check_whole(value: Any, name: str, low: int, high: int | None = None) -> None:
    """One sentence unless ``value`` is a whole number (not a bool) in [low, high]."""
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if whole and low <= value and (high is None or value <= high):
        return
    bounds = f">= {low}" if high is None else f"from {low} to {high}"
    raise ValueError(f"{name} must be a whole number {bounds}, got {value!r}.")


def whole_number(low: int, high: int) -> Any:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a number from {low} to {high}, got {value}")
        return value

    return parse


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip


def byte_size(text: str) -> int:
    """An argparse type: a size in bytes, with a unit or not ("8GiB", "500 MB", "2e9")."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).upper() if match else ""
    if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 8GiB, 500MB or 2e9 (bytes), got {text!r}"
        )
    return int(float(match.group(1)) * _UNITS[unit])


def show_bytes(n: float) -> str:
    """A size for people: "19.5 KiB", "130 MiB" (the units byte_size takes)."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The runtime flags, with defaults from RuntimeOptions and the valid names from the
    registries (so that help never lists a policy or store that does not exist)."""
    default = RuntimeOptions()
    group = parser.add_argument_group("runtime")
    group.add_argument(
        "--threads",
        type=whole_number(1, MAX_THREADS),
        default=default.threads,
        help="worker threads (default: $TILECC_THREADS, else every available core)",
    )
    # --policy and --quantum default to None, so that a job can tell them chosen from defaulted
    # (a tuned configuration fills in what was not chosen); from_args puts the defaults in.
    group.add_argument(
        "--policy",
        default=None,
        help=f"scheduling policy: {', '.join(_core.policy_names())} (default: {default.policy})",
    )
    group.add_argument(
        "--quantum",
        type=whole_number(1, 2**31 - 1),
        default=None,
        help=f"tasks taken per counter fetch; for buckets, the fewest per chunk "
        f"(default: {default.quantum})",
    )
    group.add_argument(
        "--group-size",
        type=whole_number(1, MAX_THREADS),
        default=default.group_size,
        help="workers per bucket (default: a NUMA domain or a core pair)",
    )
    group.add_argument(
        "--refine",
        action=argparse.BooleanOptionalAction,
        default=default.refine,
        help="schedule each run of a plan with the task times measured in its last run "
        "(default: on)",
    )
    group.add_argument(
        "--store",
        default=None,
        help=f"where blocks live: {', '.join(_core.store_names())} (default: {default.store}, "
        f"or disk when the job does not fit in the memory budget)",
    )
    group.add_argument(
        "--memory-budget",
        "--memory",
        type=byte_size,
        default=default.memory_budget,
        metavar="SIZE",
        help="most bytes of tensors held at once, per rank, e.g. 8GiB; with --store disk, of "
        "blocks held in memory (default: no limit)",
    )
    group.add_argument(
        "--staging",
        default=default.staging,
        help=f"how --store disk moves blocks through the memory budget: "
        f"{', '.join(SCHEDULES)} (default: {default.staging})",
    )
    group.add_argument(
        "--scratch",
        default=default.scratch,
        metavar="DIR",
        help="where --store disk keeps its files (default: $TILECC_SCRATCH, else a new "
        "temporary directory)",
    )
    group.add_argument(
        "--placement",
        default=default.placement,
        help=f"on several ranks, which rank runs each task: {', '.join(PLACEMENTS)} "
        "(default: the policy decides, by its counter or LPT shares)",
    )
    group.add_argument(
        "--workq",
        type=int,
        default=default.workq,
        metavar="N",
        help="on several ranks, WorkQ: a courier thread per rank fetches the blocks of up to N of "
        f"its tasks ahead of the workers (default: {default.workq}, off)",
    )
    group.add_argument(
        "--keep-scratch",
        action="store_true",
        default=default.keep_scratch,
        help="leave the scratch files when the job ends",
    )
