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

from tilecc.staging.hypergraph import BlockHypergraph
from tilecc.staging.partition import one_level, read_once_only, two_level
from tilecc.staging.stages import Stage, Staging, one_step_stage

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
    """The fewest bytes any schedule needs: the blocks of the task that touches the most."""
    return max(
        (int(sum(h.net_bytes[e] for e in nets)) for nets in h.nets_of()),
        default=0,
    )


def staging(h: BlockHypergraph, limit: int, name: str) -> Staging:
    """The named schedule's stages of a contraction within ``limit`` bytes held at once."""
    if name not in SCHEDULES:
        raise ValueError(f"unknown staging {name!r}; valid ones are: {', '.join(SCHEDULES)}.")
    need = smallest_memory(h)
    if need > limit:
        raise ValueError(
            f"the memory budget of {limit} bytes is smaller than the blocks one task of a "
            f"contraction needs at once ({need} bytes); give a budget of at least {need} bytes."
        )
    make = SCHEDULES[name]
    return Staging(name, tuple(make(h, limit)) if make is not None else ())


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
