"""The amplitudes as one vector, for DIIS and residuals, without leaving their blocks; and its
tile-independent form in checkpoints.

A :class:`BlockVector` is a tuple of tensors. Its dot product is the sum of the tensors'
:meth:`Tensor.dot`, which is the dense tensors' own (every symmetric image counted), so DIIS's
extrapolation and the convergence test do not depend on the tile size (packed stored elements,
each counted once, once gave tile 4 and tile 16 energies 8.8e-9 Eh apart). Linear combinations
run block by block on the engine: no array of all amplitudes is ever formed, so a vector can
live wherever its tensors' blocks do.

Checkpoints keep a vector over the segment tiling (one block per spin and irrep segment),
weighted so that its plain dot product is the dense one (:class:`SegmentPacking`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from tilecc.tensor import Tensor


class BlockVector:
    """Tensors of one calculation's amplitudes, as one vector."""

    def __init__(self, tensors: Iterable[Tensor]) -> None:
        self.tensors = tuple(tensors)

    def dot(self, other: BlockVector) -> float:
        return sum((a.dot(b) for a, b in zip(self.tensors, other.tensors)), 0.0)

    def norm(self) -> float:
        """The norm; NaN or infinite when an element is."""
        square = self.dot(self)
        return square if math.isnan(square) else math.sqrt(max(0.0, square))

    def minus(self, other: BlockVector) -> BlockVector:
        """self - other, as new tensors."""
        out = [a.copy() for a in self.tensors]
        for o, b in zip(out, other.tensors):
            o.add_(b, alpha=-1.0)
        return BlockVector(out)

    @staticmethod
    def combination(coefficients: Sequence[float], vectors: Sequence[BlockVector]) -> BlockVector:
        """sum_i coefficients[i] * vectors[i], as new tensors."""
        out = [Tensor.like(t) for t in vectors[0].tensors]
        for c, v in zip(coefficients, vectors):
            for o, t in zip(out, v.tensors):
                o.add_(t, alpha=float(c))
        return BlockVector(out)


class SegmentPacking:
    """Block vectors of tensors shaped like ``templates`` to and from the checkpoint's form: the
    same tensors retiled to one block per spin and irrep segment, packed, each element weighted
    by the square root of the dense elements it stands for (:meth:`Tensor.packed_weights`)."""

    def __init__(self, templates: Sequence[Tensor]) -> None:
        self.templates = list(templates)
        self._segments: list[Tensor] | None = None

    def to_segments(self, vector: BlockVector) -> np.ndarray:
        out = []
        for tensor, segment in zip(vector.tensors, self._segment_templates()):
            segment.copy_retiled_(tensor)
            out.append(segment.packed_weights() * segment.to_vector())
        return np.concatenate(out) if out else np.zeros(0)

    def from_segments(self, packed: np.ndarray) -> BlockVector:
        segments = self._segment_templates()
        sizes = [s.stored_elements for s in segments]
        if len(packed) != sum(sizes):
            raise ValueError(
                f"an amplitude vector of {len(packed)} elements does not fit tensors of "
                f"{sum(sizes)}; it belongs to another calculation."
            )
        out = []
        for part, segment, template in zip(
            np.split(packed, np.cumsum(sizes)[:-1]), segments, self.templates
        ):
            segment.from_vector_(part / segment.packed_weights())
            tensor = Tensor.like(template)
            tensor.copy_retiled_(segment)
            out.append(tensor)
        return BlockVector(out)

    def _segment_templates(self) -> list[Tensor]:
        if self._segments is None:
            self._segments = [t.retiled(None) for t in self.templates]
        return self._segments
