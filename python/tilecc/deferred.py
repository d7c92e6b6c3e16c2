"""What a deferred block (``Context.deferred``) queues, and the order the queue runs in.

A CC update is dozens of contractions, most of them small, and many accumulate into the same
intermediate. Run one after another, each ends with its workers waiting for its slowest task.
The queue runs independent contractions together, as one pool of tasks (``contract_batch`` in
include/tilecc/contract.hpp), so that a worker done with one contraction's tasks takes another's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueuedOperation:
    """A tensor operation other than a contraction; it may read or write each tensor it touches."""

    run: Callable[[], object]
    touches: frozenset[int]  # ids of the tensors


@dataclass(frozen=True)
class QueuedContraction:
    """c += alpha * a * b (tensors), with the plan of ``entry`` (built when the block ends)."""

    entry: Any
    alpha: float
    c: Any
    a: Any
    b: Any

    @property
    def reads(self) -> tuple[int, int]:
        return id(self.a), id(self.b)


Queued = QueuedOperation | QueuedContraction


def in_batches(
    queue: list[Queued], alone: Callable[[QueuedContraction], bool]
) -> Iterator[QueuedOperation | list[QueuedContraction]]:
    """The queue's steps in an order that computes what the queue's order computes, with the
    contractions gathered into batches to run together.

    A batch takes each next contraction that reads no tensor the batch writes and writes no
    tensor the batch reads; contractions that accumulate into one output may share it (the engine
    keeps each block's sums in queue order). An operation that touches no tensor of the pending
    batch runs ahead of it, since the two commute; any other operation ends the batch first. A
    contraction for which ``alone(contraction)`` holds gets a batch to itself.
    """
    batch: list[QueuedContraction] = []
    reads: set[int] = set()
    writes: set[int] = set()
    for step in queue:
        if isinstance(step, QueuedOperation):
            if step.touches & (reads | writes):
                yield batch
                batch, reads, writes = [], set(), set()
            yield step
            continue
        joins = (
            not alone(step)
            and not (batch and alone(batch[0]))
            and not writes.intersection(step.reads)
            and id(step.c) not in reads
        )
        if batch and not joins:
            yield batch
            batch, reads, writes = [], set(), set()
        batch.append(step)
        reads.update(step.reads)
        writes.add(id(step.c))
    if batch:
        yield batch
