"""Tensor: a block-sparse tensor with permutational, spin and point-group symmetry."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from tilecc import _core
from tilecc.context import Context, default_context
from tilecc.space import Space
from tilecc.typing import Generator, LabelKey


class Tensor:
    """A block tensor over index spaces that stores only its canonical non-zero blocks.

    Args:
        spaces: one :class:`Space` per index.
        symmetry: generators of its permutational symmetry, e.g. ``antisymmetric_pairs()`` for
            t_ijab = -t_jiab = -t_ijba, or ``[symmetric(4,0,1), symmetric(4,2,3), bra_ket_swap()]``
            for the 8-fold symmetry of real (pq|rs).
        spin_sides: +1 (bra) / -1 (ket) / 0 per index for the spin-conservation rule
            sum_k side_k * sz_k = 0; default: first half bra, second half ket.
        irrep: the irrep of the tensor (0 for every tensor of a ground-state energy).
        name: used in messages.
        context: where it runs; the default context if omitted.

    Index it with labels to write expressions: ``r2["ijab"] += 0.5 * t2["ijcd"] * v["abcd"]``.
    Methods ending in ``_`` change the tensor in place.

    >>> from tilecc import antisymmetric
    >>> o = Space.spatial(3, tile=2, kind="occupied", name="o")
    >>> t = Tensor([o, o], symmetry=[antisymmetric(2, 0, 1)], name="t")
    >>> t.fill_(1.0)
    >>> t.to_dense()
    array([[ 0.,  1.,  1.],
           [-1.,  0.,  1.],
           [-1., -1.,  0.]])
    """

    #: The owner maps tensors were redistributed to in this process (every rank makes the same,
    #: in one order), numbered from 1: a tensor's ``layout`` is 0 on its hash owners, else the
    #: number of its owner map, so that tensors laid out alike share a number (and a placement).
    _layouts: ClassVar[dict[tuple[int, bytes], int]] = {}
    layout = 0

    def __init__(
        self,
        spaces: Sequence[Space],
        symmetry: Sequence[Generator] = (),
        *,
        spin_sides: Sequence[int] | None = None,
        irrep: int = 0,
        name: str = "",
        context: Context | None = None,
    ) -> None:
        self.name = name or "tensor"
        spaces = tuple(spaces)
        for k, s in enumerate(spaces):
            if not isinstance(s, Space):
                raise ValueError(
                    f"{self.name}: index {k} must be a tilecc.Space, got {type(s).__name__}."
                )
        generators = tuple(_normalise_generator(self.name, g) for g in symmetry)
        sides = () if spin_sides is None else tuple(int(x) for x in spin_sides)
        self.context = context if context is not None else default_context()
        self.spaces = spaces
        self.symmetry = generators
        self._shape_id, self._shape = self.context.shape(spaces, generators, sides, int(irrep))
        self._core = self.context.runtime.tensor(self._shape)
        self._elements: list[tuple[tuple[int, ...], int]] | None = None

    @classmethod
    def like(cls, other: Tensor, name: str = "") -> Tensor:
        """A zero tensor with the same spaces, symmetry and context as ``other``, its blocks on
        the same ranks (on several ranks, where ``other`` was redistributed)."""
        out = cls(
            other.spaces,
            other.symmetry,
            spin_sides=other.spin_sides,
            irrep=other.irrep,
            name=name or other.name,
            context=other.context,
        )
        if other.layout:
            owners = other.owners
            assert owners is not None  # redistributed, so distributed
            out.redistribute_(owners)
        return out

    @classmethod
    def diagonal(
        cls, space: Space, values: np.ndarray, *, name: str = "diag", context: Context | None = None
    ) -> Tensor:
        """The [space, space] matrix with ``values`` (in sorted orbital order) on its diagonal:
        ``Tensor.diagonal(v, v.energies)`` is the virtual block of a canonical Fock matrix."""
        d = cls([space, space], name=name, context=context)
        d.from_dense_(np.diag(np.asarray(values, dtype=np.float64)))
        return d

    # -- structure ---------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.spaces)

    @property
    def shape(self) -> tuple[int, ...]:
        """The dense shape (orbitals per index)."""
        return tuple(s.size for s in self.spaces)

    @property
    def spin_sides(self) -> tuple[int, ...]:
        return tuple(self._shape.spin_sides)

    @property
    def irrep(self) -> int:
        return int(self._shape.irrep)

    @property
    def group_elements(self) -> list[tuple[tuple[int, ...], int]]:
        """Every element (perm, sign) of the symmetry group, the identity first."""
        if self._elements is None:
            self._elements = [(tuple(p), int(s)) for p, s in self._shape.group.elements]
        return self._elements

    @property
    def num_blocks(self) -> int:
        """Stored (canonical, non-zero) blocks."""
        return int(self._shape.num_blocks)

    @property
    def stored_elements(self) -> int:
        return int(self._shape.stored_elements)

    @property
    def dense_elements(self) -> int:
        return int(self._shape.dense_elements)

    def storage_report(self) -> dict[str, int | float]:
        """Stored vs dense sizes: what symmetry saves."""
        return {
            "blocks": self.num_blocks,
            "stored_elements": self.stored_elements,
            "nonzero_elements": int(self._shape.nonzero_elements),
            "dense_elements": self.dense_elements,
            "stored_fraction": self.stored_elements / max(1, self.dense_elements),
        }

    # -- data --------------------------------------------------------------------------------
    def _has_data(self) -> bool:
        """Settle what the queue holds for this tensor; False for a planning tensor (store
        "none", see Context.planning), which has no blocks: data methods then do nothing."""
        self.context.settle(self)
        return not self.context.planning

    def zero_(self) -> None:
        if self._has_data():
            self._core.zero()

    def fill_(self, value: float) -> None:
        """The canonical element of each symmetry orbit set to ``value``, the others to
        ``sign * value``; elements the symmetry forces to zero (t_iiab) stay zero."""
        if self._has_data():
            self._core.fill(float(value))

    def fill_random_(self, seed: int) -> None:
        """Uniform random elements in [-1, 1), reproducible from ``seed``, with exact symmetry."""
        if self._has_data():
            self._core.fill_random(int(seed) & (2**64 - 1))

    def scale_(self, alpha: float) -> None:
        if self._has_data():
            self._core.scale(float(alpha))

    def divide_by_denominators_(self, signs: Sequence[int], shift: float = 0.0) -> None:
        """T[x] /= shift + sum_k signs[k] * e_k[x_k] (orbital energies of the spaces):
        ``t2.divide_by_denominators_((1, 1, -1, -1))`` divides by e_i + e_j - e_a - e_b."""
        if self._has_data():
            self._core.divide_by_denominators([int(s) for s in signs], float(shift))

    def copy(self, name: str = "") -> Tensor:
        out = Tensor.like(self, name or self.name)
        out.add_(self, alpha=1.0, beta=0.0)
        return out

    def add_(self, other: Tensor, alpha: float = 1.0, beta: float = 1.0) -> None:
        """self = beta * self + alpha * other, block by block (other: the same structure)."""
        from tilecc.expr import add_permuted

        labels = tuple(f"p{k}" for k in range(self.rank))
        add_permuted(self, labels, other, labels, alpha, beta)

    def retiled(self, tile: int | None = None, name: str = "") -> Tensor:
        """A copy over the same orbitals cut into tiles of ``tile`` orbitals (None: one tile per
        spin and irrep segment, the tile-independent form checkpoints store)."""
        out = Tensor(
            [s.retiled(tile) for s in self.spaces],
            self.symmetry,
            spin_sides=self.spin_sides,
            irrep=self.irrep,
            name=name or self.name,
            context=self.context,
        )
        out.copy_retiled_(self)
        return out

    def copy_retiled_(self, other: Tensor) -> None:
        """Take ``other``'s values: the same tensor over the same orbitals, tiled otherwise."""
        other.context.settle(other)
        if self._has_data():
            _core.copy_retiled(other._core, self._core)

    def settled_core(self) -> _core.BlockTensor:
        """The core tensor once every queued operation on it has run: what a kernel that reads
        a tensor's blocks itself (the (T) kernels) is handed."""
        self.context.settle(self)
        return self._core

    @property
    def owners(self) -> np.ndarray | None:
        """On several ranks (the ``mpi`` store), the rank each stored block lives on, by slot;
        None for a tensor of one process."""
        owners = self._core.owners if self._has_data() else []
        return np.asarray(owners, dtype=int) if len(owners) else None

    def redistribute_(self, owners: Sequence[int] | np.ndarray) -> None:
        """Move the blocks to these owner ranks, one per stored block by slot (collective: every
        rank gives the same). Contractions with a placement then place their tasks by the blocks'
        new owners."""
        if self._has_data():
            by_slot = np.asarray(owners, dtype=np.int64)
            self._core.redistribute(by_slot.tolist())
            key = (self._shape_id, by_slot.tobytes())
            self.layout = Tensor._layouts.setdefault(key, len(Tensor._layouts) + 1)

    def distribute_on_grid_(
        self, grid: Sequence[int], node_grid: Sequence[int] | None = None
    ) -> None:
        """Lay the blocks out block-cyclically over a processor grid (paper 002), one dimension per
        index, with each node holding a ``node_grid`` box of it (default: the node-oblivious
        numbering, :func:`tilecc.grids.default_node_grid`; :func:`tilecc.grids.node_aware_grid`
        chooses the box that moves the fewest words between nodes)."""
        from tilecc import grids, mpi

        if len(grid) != len(self.spaces):
            raise ValueError(
                f"{self.name} has {len(self.spaces)} indices and the grid "
                f"{' x '.join(map(str, grid))} {len(grid)} dimensions; give one per index."
            )
        world = mpi.world()
        if math.prod(grid) != world.size:
            raise ValueError(
                f"the grid {' x '.join(map(str, grid))} has {math.prod(grid)} positions for "
                f"{world.size} ranks; give a grid of exactly the job's ranks."
            )
        box = node_grid or grids.default_node_grid(grid, world.ranks_per_node)
        if math.prod(box) != world.ranks_per_node:
            raise ValueError(
                f"the node grid {' x '.join(map(str, box))} holds {math.prod(box)} ranks and "
                f"the job's nodes {world.ranks_per_node}; give a box of the ranks per node."
            )
        shape = self._shape
        tiles = [shape.block_tiles(b) for b in range(shape.num_blocks)]
        self.redistribute_(grids.grid_owners(tiles, grid, box))

    def transfers(self) -> dict[str, tuple[int, int]]:
        """(bytes, calls) of each transfer class its store counted since it was made (or
        :meth:`reset_transfers`): views, copies, intra- and inter-node copies, disk reads and
        writes."""
        self.context.settle(self)
        return {name: (int(b), int(c)) for name, (b, c) in self._core.transfers().items()}

    def reset_transfers(self) -> None:
        self._core.reset_transfers()

    def packed_weights(self) -> np.ndarray:
        """For each element of :meth:`to_vector`, the square root of the number of dense elements
        it stands for (its block's orbit under the symmetry group; diagonal blocks are stored
        whole, so their elements stand for one each), so that ``(w * x) @ (w * y)`` is the dense
        tensors' dot product at any tile size.

        >>> from tilecc import antisymmetric
        >>> o = Space.spatial(3, tile=2, kind="occupied", name="o")
        >>> t = Tensor([o, o], symmetry=[antisymmetric(2, 0, 1)], name="t")
        >>> t.fill_(1.0)
        >>> packed, dense = t.packed_weights() * t.to_vector(), t.to_dense().ravel()
        >>> float(packed @ packed), float(dense @ dense)
        (6.0, 6.0)
        """
        shape = self._shape
        tiles = [space.tiles for space in self.spaces]
        sizes = [
            int(np.prod([tiles[k][t][1] for k, t in enumerate(shape.block_tiles(b))]))
            for b in range(shape.num_blocks)
        ]
        orbits = [shape.orbit_size(b) for b in range(shape.num_blocks)]
        return np.repeat(np.sqrt(np.asarray(orbits, dtype=float)), sizes)

    def to_vector(self) -> np.ndarray:
        """The stored (canonical) elements as one vector: the tensor's independent parameters."""
        out = np.zeros(self.stored_elements)
        if self._has_data():
            self._core.pack(out)
        return out

    def from_vector_(self, values: np.ndarray) -> None:
        """The inverse of :meth:`to_vector`."""
        if self._has_data():
            self._core.unpack(np.ascontiguousarray(values, dtype=np.float64))

    def to_dense(self) -> np.ndarray:
        """The dense array, indexed in each space's sorted orbital order."""
        out = np.zeros(self.shape)
        if self._has_data():  # a planning tensor reads as zeros
            self._core.to_dense(out)
        return out

    def from_dense_(self, array: np.ndarray, *, check: bool = True, atol: float = 1e-10) -> None:
        """Take the canonical blocks of a dense array (indexed in sorted orbital order).

        With ``check`` (the default) the array must have the tensor's symmetry and sparsity to
        ``atol``; otherwise what does not fit is silently dropped.
        """
        a = np.ascontiguousarray(array, dtype=np.float64)
        if not self._has_data():
            return
        if a.shape != self.shape:
            raise ValueError(
                f"{self.name}: the array's shape {a.shape} is not the tensor's {self.shape}."
            )
        self._core.from_dense(a)
        if check:
            back = self.to_dense()
            worst = float(np.max(np.abs(back - a))) if a.size else 0.0
            if worst > atol:
                where = np.unravel_index(int(np.argmax(np.abs(back - a))), a.shape)
                raise ValueError(
                    f"{self.name}: the array breaks the tensor's symmetry or sparsity by "
                    f"{worst:.3g} "
                    f"at index {tuple(int(i) for i in where)}; symmetrize it first or pass "
                    f"check=False to keep only the canonical blocks."
                )

    def from_blocks_(self, block: Callable[[tuple[slice, ...]], np.ndarray]) -> None:
        """Fill every stored (canonical) block with ``block(ranges)``, where ``ranges`` holds
        each index's slice of sorted orbitals: a way to load a tensor too large to exist as one
        dense array. Symmetric images are implied, as with :meth:`from_dense_`. On several ranks,
        each computes only the blocks it owns (every rank calls this)."""
        if not self._has_data():
            return
        for slot, ranges in self.stored_blocks():
            if self._core.owns(slot):  # another rank's block: its owner computes it
                self.write_block_(slot, block(ranges))
        self.complete_writes_()

    def stored_blocks(self) -> list[tuple[int, tuple[slice, ...]]]:
        """Every stored (canonical) block: its slot, and each index's slice of sorted orbitals."""
        return [(slot, self._block_ranges(slot)) for slot in range(self._core.shape.num_blocks)]

    def _block_ranges(self, slot: int) -> tuple[slice, ...]:
        tiles = (space.tiles for space in self.spaces)
        return tuple(
            slice(offset, offset + extent)
            for offset, extent in (
                axis[t] for axis, t in zip(tiles, self._core.shape.block_tiles(slot))
            )
        )

    def write_block_(self, slot: int, values: np.ndarray) -> None:
        """Write one whole stored block (values over its ranges; symmetric images implied) to
        the rank that owns it. Writes are visible everywhere after :meth:`complete_writes_`."""
        if not self._has_data():
            return
        values = np.ascontiguousarray(values, dtype=np.float64)
        expected = tuple(r.stop - r.start for r in self._block_ranges(slot))
        if values.shape != expected:
            raise ValueError(
                f"{self.name}: block {slot} came back with shape {values.shape}, "
                f"not {expected}; return one value per element of the ranges."
            )
        self._core.write_block(slot, values.ravel())

    def complete_writes_(self) -> None:
        """Make every rank's block writes visible on every rank (collective on several ranks:
        each calls it once the writes it makes are done; a no-op in one process)."""
        self._core.complete_writes()

    def norm(self) -> float:
        """The Frobenius norm of the dense tensor (symmetric images included); NaN when an
        element is NaN, infinite when one is infinite."""
        square = self.dot(self)
        if math.isnan(square):
            return square
        return math.sqrt(max(0.0, square))  # rounding can make an exact 0 slightly negative

    def dot(self, other: Tensor) -> float:
        """sum_x self[x] * other[x] over the dense tensors."""
        labels = "".join(f"p{k}," for k in range(self.rank)).rstrip(",")
        from tilecc.expr import evaluate_scalar

        return evaluate_scalar(self[labels] * other[labels])

    # -- expressions -------------------------------------------------------------------------
    def __getitem__(self, key: LabelKey) -> Any:
        from tilecc.expr import Labelled, parse_labels

        return Labelled(self, parse_labels(key, self))

    def __setitem__(self, key: LabelKey, value: object) -> None:
        from tilecc.expr import Applied, assign, parse_labels

        labels = parse_labels(key, self)
        if isinstance(value, Applied) and value.target is self and value.labels == labels:
            return  # `t[...] += expr` already accumulated in Labelled.__iadd__
        assign(self, labels, value, accumulate=False)

    def __repr__(self) -> str:
        spaces = ", ".join(s.name or "?" for s in self.spaces)
        return (
            f"Tensor({self.name}: [{spaces}], {len(self.group_elements)} symmetry elements, "
            f"{self.num_blocks} blocks, {self.stored_elements} of {self.dense_elements} "
            f"elements stored)"
        )


def _normalise_generator(name: str, g: Any) -> tuple[tuple[int, ...], int]:
    try:
        perm, sign = g
        return tuple(int(p) for p in perm), int(sign)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name}: a symmetry generator is a (permutation, sign) pair such as "
            f"((1, 0, 2, 3), -1), got {g!r}."
        ) from None
