"""What this process holds and may hold: its peak and current resident memory, and the memory
available to it (the machine's, or its cgroup's limit when lower), less a margin. Read from the
kernel (getrusage, /proc, cgroup v2); what a run reports and a plan weighs."""

from __future__ import annotations

import os
import resource
from pathlib import Path

#: Held back from the memory the process may use when no budget is given: for the kernel, the
#: page cache and whatever else runs beside the job.
MARGIN = 0.1


def peak_rss_bytes() -> int:
    """The most this process has held resident so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def resident_bytes() -> int:
    """What this process holds resident now."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return peak_rss_bytes()


def available_memory() -> int:
    """The memory this process may use: the cgroup's limit when there is one, else the
    machine's available memory, less MARGIN."""
    limits = [_meminfo_available()]
    cgroup = Path("/sys/fs/cgroup/memory.max")
    if cgroup.exists():
        text = cgroup.read_text().strip()
        if text.isdigit():
            limits.append(int(text))
    return int(min(limits) * (1 - MARGIN))


def _meminfo_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
