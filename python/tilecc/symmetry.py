"""Builders for symmetry generators (see tilecc.typing.Generator)."""

from __future__ import annotations

from tilecc.typing import Generator


def _swap(rank: int, i: int, j: int) -> list[int]:
    if not (0 <= i < rank and 0 <= j < rank and i != j):
        raise ValueError(
            f"cannot swap indices {i} and {j} of a rank-{rank} tensor; give two "
            f"different indices between 0 and {rank - 1}."
        )
    perm = list(range(rank))
    perm[i], perm[j] = j, i
    return perm


def antisymmetric(rank: int, i: int, j: int) -> Generator:
    """T[..i..j..] = -T[..j..i..]: ``antisymmetric(4, 0, 1)`` is t_ijab = -t_jiab."""
    return (_swap(rank, i, j), -1)


def symmetric(rank: int, i: int, j: int) -> Generator:
    """T[..i..j..] = T[..j..i..]."""
    return (_swap(rank, i, j), 1)


def pair_swap() -> Generator:
    """t_ij^ab = t_ji^ba for t stored as t[i, j, a, b]: swap i with j and a with b at once."""
    return ([1, 0, 3, 2], 1)


def bra_ket_swap(rank: int = 4) -> Generator:
    """<pq|rs> = <rs|pq> for real orbitals: perm (2,3,0,1)."""
    if rank % 2:
        raise ValueError(f"bra_ket_swap needs an even rank, got {rank}.")
    half = rank // 2
    return ([*range(half, rank), *range(half)], 1)


def antisymmetric_pairs(rank: int = 4) -> list[Generator]:
    """The antisymmetry of amplitudes and antisymmetrized integrals: (i,j) and (a,b) of t_ijab."""
    if rank != 4:
        raise ValueError(f"antisymmetric_pairs describes rank-4 tensors, got rank {rank}.")
    return [antisymmetric(4, 0, 1), antisymmetric(4, 2, 3)]
