"""A stage schedule and what it costs: which blocks are held while which tasks run (see
include/tilecc/staging.hpp, which runs it), the bytes it reads and writes, and the most bytes it
holds at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tilecc.hypergraph import OPERANDS, BlockHypergraph


@dataclass(frozen=True)
class Step:
    tasks: tuple[int, ...]
    nets: tuple[int, ...]  # held while the step's tasks run
    #: Operand blocks the tasks read one product at a time instead of holding them (a task
    #: whose blocks outgrow the memory; see StageStep in include/tilecc/staging.hpp).
    streamed: tuple[int, ...] = ()


@dataclass(frozen=True)
class Stage:
    shared: tuple[int, ...]  # nets held through every step
    steps: tuple[Step, ...]

    def renumbered(self, tasks: Sequence[int]) -> Stage:
        """The stage with task t renamed tasks[t] (a schedule of a restricted hypergraph)."""
        return Stage(
            self.shared,
            tuple(Step(tuple(tasks[t] for t in s.tasks), s.nets, s.streamed) for s in self.steps),
        )


@dataclass(frozen=True)
class Staging:
    """Stages in the order they run, and the name of the schedule that made them."""

    name: str
    stages: tuple[Stage, ...] = field(default_factory=tuple)

    def io(self, h: BlockHypergraph) -> tuple[int, int]:
        """(bytes read, bytes written): a held block is read when it is taken in, and an output
        block written back when it is let go."""
        read = written = 0
        for stage in self.stages:
            held = list(stage.shared) + [e for step in stage.steps for e in step.nets]
            streamed = [e for step in stage.steps for e in step.streamed]
            read += sum(int(h.net_bytes[e]) for e in held + streamed)
            written += sum(int(h.net_bytes[e]) for e in held if h.written(e))
        return read, written

    def peak(self, h: BlockHypergraph) -> int:
        """The most bytes held at once (a streamed step's: its outputs, and its largest block of
        each operand)."""
        most = 0
        for stage in self.stages:
            shared = sum(int(h.net_bytes[e]) for e in stage.shared)
            for step in stage.steps:
                held = shared + sum(int(h.net_bytes[e]) for e in step.nets)
                most = max(most, held + largest_operands(h, step.streamed))
        return most

    def for_core(self, h: BlockHypergraph) -> list[tuple[list, list]]:
        """The stages as Schedule.set_staging takes them."""

        def blocks(nets: tuple[int, ...]) -> list[tuple[int, int]]:
            return [(OPERANDS.index(h.nets[e][0]), h.nets[e][1]) for e in nets]

        return [
            (
                blocks(s.shared),
                [(list(step.tasks), blocks(step.nets), bool(step.streamed)) for step in s.steps],
            )
            for s in self.stages
        ]


def largest_operands(h: BlockHypergraph, nets: Sequence[int]) -> int:
    """The bytes of the largest block of a and of b among ``nets``: the most one product of a
    streamed task holds of its operands."""
    return sum(
        max((int(h.net_bytes[e]) for e in nets if h.nets[e][0] == operand), default=0)
        for operand in "ab"
    )


def held_by(tasks: list[int], nets_of: list[list[int]]) -> tuple[int, ...]:
    """The nets a set of tasks touches, ascending."""
    return tuple(sorted({e for t in tasks for e in nets_of[t]}))


def one_step_stage(tasks: list[int], nets_of: list[list[int]]) -> Stage:
    """A stage holding every block of its tasks for all of them."""
    return Stage((), (Step(tuple(tasks), held_by(tasks, nets_of)),))


def streamed_stage(h: BlockHypergraph, task: int, nets_of: list[list[int]]) -> Stage:
    """A stage of one task that holds its output blocks and streams its operands."""
    nets = nets_of[task]
    outputs = tuple(e for e in nets if h.written(e))
    return Stage((), (Step((task,), outputs, tuple(e for e in nets if not h.written(e))),))
