"""Index spaces: orbitals with spin and irrep labels, sorted and cut into tiles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tilecc import _core
from tilecc.typing import FloatSequence

_KINDS = {
    "general": _core.SpaceKind.general,
    "occupied": _core.SpaceKind.occupied,
    "virtual": _core.SpaceKind.virtual,
}
_SPINS = {"alpha": 1, "a": 1, 1: 1, "beta": -1, "b": -1, -1: -1, None: 0, "none": 0, 0: 0}


class Space:
    """An index space: orbitals ordered by spin (alpha, beta, spatial), then irrep, then energy,
    cut into tiles of about ``tile`` orbitals that never straddle a spin or irrep boundary.

    Args:
        irreps: the irrep (0-7, PySCF's D2h-subgroup numbering, products by XOR) of each orbital.
        spins: "alpha"/"beta"/None (or +1/-1/0) per orbital; None everywhere for spatial orbitals.
        energies: orbital energies (for CC denominators); zeros if omitted.
        tile: the tile size in orbitals.
        kind: "occupied", "virtual" or "general"; labels i-o must be occupied, a-h virtual.
        name: used in messages.

    Dense arrays exchanged with tensors over this space are indexed in its *sorted* order;
    ``order[p]`` is the caller's index of the orbital at sorted position p.

    >>> s = Space(irreps=[1, 0, 1, 0], tile=8, name="o", kind="occupied")
    >>> s.size, s.num_tiles, s.order
    (4, 2, [1, 3, 0, 2])
    """

    def __init__(
        self,
        irreps: Sequence[int],
        *,
        spins: Sequence[object] | None = None,
        energies: FloatSequence | None = None,
        tile: int = 16,
        kind: str = "general",
        name: str = "",
    ) -> None:
        n = len(irreps)
        if kind not in _KINDS:
            raise ValueError(
                f"space {name!r}: kind must be one of {', '.join(_KINDS)}, got {kind!r}."
            )
        if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)):
            raise ValueError(f"space {name!r}: tile size must be a whole number, got {tile!r}.")
        spin_list = [None] * n if spins is None else list(spins)
        energy_list = [0.0] * n if energies is None else [float(e) for e in energies]
        if len(spin_list) != n or len(energy_list) != n:
            raise ValueError(
                f"space {name!r}: give one irrep, spin and energy per orbital; got {n} irreps, "
                f"{len(spin_list)} spins and {len(energy_list)} energies."
            )
        try:
            spin_codes = [_SPINS[s] for s in spin_list]  # type: ignore[index]
        except (KeyError, TypeError):
            bad = next(s for s in spin_list if not _hashable_in(s, _SPINS))
            raise ValueError(
                f"space {name!r}: spin {bad!r} is not one of 'alpha', 'beta' or None."
            ) from None
        self._core = _core.IndexSpace(
            spin_codes, [int(i) for i in irreps], energy_list, int(tile), name, _KINDS[kind]
        )
        self.kind = kind

    @classmethod
    def spatial(
        cls,
        size: int,
        *,
        tile: int = 16,
        kind: str = "general",
        name: str = "",
        irreps: Sequence[int] | None = None,
        energies: FloatSequence | None = None,
    ) -> Space:
        """Spatial orbitals (no spin), all totally symmetric unless irreps are given."""
        return cls(
            list(irreps) if irreps is not None else [0] * size,
            energies=energies,
            tile=tile,
            kind=kind,
            name=name,
        )

    @classmethod
    def spin_orbitals(
        cls,
        irreps: Sequence[int],
        *,
        energies: FloatSequence | None = None,
        beta_irreps: Sequence[int] | None = None,
        beta_energies: FloatSequence | None = None,
        tile: int = 16,
        kind: str = "general",
        name: str = "",
    ) -> Space:
        """Alpha orbitals with these irreps followed by beta ones (the same, unless given)."""
        b_irreps = list(irreps) if beta_irreps is None else list(beta_irreps)
        a_en = [0.0] * len(irreps) if energies is None else list(energies)
        b_en = list(a_en) if beta_energies is None else list(beta_energies)
        if beta_energies is None and beta_irreps is not None:
            b_en = [0.0] * len(b_irreps)
        return cls(
            [*irreps, *b_irreps],
            spins=["alpha"] * len(irreps) + ["beta"] * len(b_irreps),
            energies=[*a_en, *b_en],
            tile=tile,
            kind=kind,
            name=name,
        )

    @property
    def size(self) -> int:
        return int(self._core.size)

    @property
    def num_tiles(self) -> int:
        return int(self._core.num_tiles)

    @property
    def tile_size(self) -> int:
        return int(self._core.tile_size)

    @property
    def name(self) -> str:
        return str(self._core.name)

    @property
    def order(self) -> list[int]:
        return list(self._core.order)

    @property
    def tiles(self) -> list[tuple[int, int]]:
        """(offset, extent) of each tile, in sorted order."""
        return [tuple(t) for t in self._core.tiles]  # type: ignore[misc]

    @property
    def spins(self) -> list[int]:
        """+1 alpha, -1 beta, 0 spatial, per orbital in sorted order."""
        return list(self._core.spins)

    @property
    def irreps(self) -> list[int]:
        return list(self._core.irreps)

    @property
    def energies(self) -> np.ndarray:
        return np.asarray(self._core.energies)

    def retiled(self, tile: int | None = None) -> Space:
        """The same orbitals, in the same order, cut into tiles of ``tile`` orbitals; None cuts
        one tile per spin and irrep segment, a tiling that no tile size can change.

        >>> s = Space(irreps=[1, 0, 1, 0, 0], tile=1)
        >>> s.num_tiles, s.retiled().num_tiles, s.retiled().order
        (5, 2, [0, 1, 2, 3, 4])
        """
        spins = {1: "alpha", -1: "beta", 0: None}
        return Space(
            self.irreps,
            spins=[spins[x] for x in self.spins],
            energies=self.energies,
            tile=max(1, self.size) if tile is None else tile,
            kind=self.kind,
            name=self.name,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Space) and bool(self._core.equals(other._core))

    def __hash__(self) -> int:
        return hash(self._core.describe())

    def __repr__(self) -> str:
        return f"Space({self._core.describe()})"


def _hashable_in(value: object, table: dict[object, int]) -> bool:
    try:
        return value in table
    except TypeError:
        return False
