"""The MPI world tilecc runs in: ranks, nodes (real, or virtual ones declared with
``TILECC_RANKS_PER_NODE`` so that node-aware behaviour is testable on one machine) and the MPI
library. MPI comes from the registry (mpi4py with the MPICH wheel, whose ``mpiexec`` lands in the
virtual environment), and is initialised only when a launcher started this process: a plain
``tilecc`` stays one process and pays nothing for it.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

#: What launchers set for the number of ranks: MPICH's Hydra and Slurm (PMI), PMIx, Open MPI.
_SIZE_VARIABLES = ("PMI_SIZE", "PMIX_SIZE", "OMPI_COMM_WORLD_SIZE")


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    ranks_per_node: int = 1
    #: True when TILECC_RANKS_PER_NODE declared the nodes (they are virtual).
    virtual_nodes: bool = False
    library: str = "none (not launched by mpiexec)"

    @property
    def nodes(self) -> int:
        return self.size // self.ranks_per_node

    @property
    def leader(self) -> bool:
        """Whether this rank prints and writes the results (rank 0)."""
        return self.rank == 0


def launched_ranks() -> int:
    """How many ranks the launcher started, read from its environment (1 when none did)."""
    for name in _SIZE_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def launched_rank() -> int:
    """This process's rank as the launcher's environment gives it (0 when none did)."""
    for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


@functools.cache
def world() -> World:
    """This process's place in the MPI world (initialising MPI when launched by mpiexec)."""
    declared = ranks_per_node_setting()
    if launched_ranks() <= 1 and declared is None:
        return World()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    per_node = node.Get_size()
    node.Free()
    if declared is not None:
        if comm.Get_size() % declared:
            raise ValueError(
                f"TILECC_RANKS_PER_NODE={declared} does not divide the {comm.Get_size()} ranks; "
                f"give a divisor of {comm.Get_size()} or unset it."
            )
        per_node = declared
    library = " ".join(MPI.Get_library_version().split()[:3])
    return World(comm.Get_rank(), comm.Get_size(), per_node, declared is not None, library)


def ranks_per_node_setting() -> int | None:
    """TILECC_RANKS_PER_NODE as a positive whole number, None when unset."""
    text = os.environ.get("TILECC_RANKS_PER_NODE", "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"TILECC_RANKS_PER_NODE must be a positive whole number of ranks per virtual node, "
            f"got {text!r}; unset it to use the machine's real nodes."
        )
    return value


@functools.cache
def communicator() -> Any:
    """The core's communicator over every rank (with the nodes ``world()`` describes), made once
    per process and shared by its runtimes; None when this process is alone."""
    w = world()
    if w.size <= 1:
        return None
    from tilecc import _core

    return _core.Communicator(w.ranks_per_node if w.virtual_nodes else 0)


def network() -> str:
    """The emulated network between (virtual) nodes: 'off', or its latency and bandwidth."""
    comm = communicator()
    return "off (one process)" if comm is None else str(comm.network)


def share_mean_field(mf: Any) -> None:
    """Rank 0's SCF solution (orbitals, their energies and occupations, the energy) on every
    rank: SCFs run on several ranks may end in orbitals that differ in phase or, where they are
    degenerate, in rotation, and the ranks' blocks must all come from the same ones."""
    if world().size <= 1:
        return
    from mpi4py import MPI

    names = ("mo_coeff", "mo_energy", "mo_occ", "e_tot")
    shared = MPI.COMM_WORLD.bcast({name: getattr(mf, name) for name in names}, root=0)
    for name, value in shared.items():
        setattr(mf, name, value)


def broadcast(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (``value`` itself alone)."""
    if world().size <= 1:
        return value
    from mpi4py import MPI

    return MPI.COMM_WORLD.bcast(value, root=0)


def gather(value: Any) -> list[Any]:
    """Every rank's ``value``, in rank order, on every rank (a one-process list alone)."""
    if world().size <= 1:
        return [value]
    from mpi4py import MPI

    return list(MPI.COMM_WORLD.allgather(value))
