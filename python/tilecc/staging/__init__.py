"""Stage schedules for contractions whose blocks do not fit in memory (paper 004, section 6),
by name: what the ``staging`` runtime option chooses for tensors in the ``disk`` store.

- ``lru``: no schedule; the disk store keeps the blocks last used, as a cache would;
- ``getnext``: each task alone, its blocks read for it and written after it (NWChem's replicated
  disk arrays with a next-task counter, on one process: no reuse between tasks);
- ``one-level``, ``read-once``, ``two-level``: hypergraph partitioning (staging/partition.py).

>>> from tilecc.staging import SCHEDULES
>>> sorted(SCHEDULES)
['getnext', 'lru', 'one-level', 'read-once', 'two-level']
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from tilecc.hypergraph import BlockHypergraph
from tilecc.staging.partition import one_level, read_once_only, two_level
from tilecc.staging.stages import Stage, Staging, largest_operands, one_step_stage, streamed_stage

__all__ = ["SCHEDULES", "BlockHypergraph", "Staging", "lru_io", "smallest_memory", "staging"]


def getnext(h: BlockHypergraph, limit: int) -> list[Stage]:
    nets_of = h.nets_of()
    return [one_step_stage([t], nets_of) for t in range(h.tasks)]


#: Each schedule's stages for a hypergraph and a memory limit in bytes (None: no stages).
SCHEDULES: dict[str, Callable[[BlockHypergraph, int], list[Stage]] | None] = {
    "lru": None,
    "getnext": getnext,
    "one-level": one_level,
    "read-once": read_once_only,
    "two-level": two_level,
}


def smallest_memory(h: BlockHypergraph) -> int:
    """The fewest bytes a schedule needs: for every task, its output blocks and its largest
    block of each operand (what one product holds when its operands are streamed)."""
    return max(
        (
            int(sum(h.net_bytes[e] for e in nets if h.written(e))) + largest_operands(h, nets)
            for nets in h.nets_of()
        ),
        default=0,
    )


def staging(h: BlockHypergraph, limit: int, name: str) -> Staging:
    """The named schedule's stages of a contraction within ``limit`` bytes held at once. Tasks
    whose blocks do not fit at once (a full reduction to a scalar reads every block) are left
    out of the schedule and run alone at its end, streaming their operands."""
    if name not in SCHEDULES:
        raise ValueError(f"unknown staging {name!r}; valid ones are: {', '.join(SCHEDULES)}.")
    need = smallest_memory(h)
    if need > limit:
        raise ValueError(
            f"the memory budget of {limit} bytes is smaller than what one task of a "
            f"contraction needs at once ({need} bytes); give a budget of at least {need} bytes."
        )
    make = SCHEDULES[name]
    if make is None:
        return Staging(name)
    nets_of = h.nets_of()
    fits = [sum(int(h.net_bytes[e]) for e in nets) <= limit for nets in nets_of]
    if all(fits):
        return Staging(name, tuple(make(h, limit)))
    kept = [t for t in range(h.tasks) if fits[t]]
    stages = [stage.renumbered(kept) for stage in make(h.restricted(kept), limit)] if kept else []
    streamed = [streamed_stage(h, t, nets_of) for t in range(h.tasks) if not fits[t]]
    return Staging(name, tuple(stages + streamed))


def lru_io(h: BlockHypergraph, limit: int) -> tuple[int, int]:
    """(bytes read, bytes written) of an LRU cache of ``limit`` bytes going through the tasks
    in order, one after the other, written back at the end: the LRU baseline's I/O."""
    nets_of = h.nets_of()
    cache: OrderedDict[int, None] = OrderedDict()
    held = read = written = 0
    dirty: set[int] = set()
    for t in range(h.tasks):
        mine = set(nets_of[t])
        for e in nets_of[t]:
            if e in cache:
                cache.move_to_end(e)
                continue
            size = int(h.net_bytes[e])
            while held + size > limit and any(x not in mine for x in cache):
                victim = next(x for x in cache if x not in mine)
                del cache[victim]
                held -= int(h.net_bytes[victim])
                if victim in dirty:
                    written += int(h.net_bytes[victim])
                    dirty.discard(victim)
            cache[e] = None
            held += size
            read += size
        dirty.update(e for e in nets_of[t] if h.written(e))
    written += sum(int(h.net_bytes[e]) for e in dirty)
    return read, written
