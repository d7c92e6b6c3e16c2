"""The amplitudes as one vector, for DIIS, residuals and checkpoints, in a metric that does not
depend on the tiling.

Packed stored elements (``Tensor.to_vector``) weigh each element once, but an element of a
canonical block stands for every block of its orbit, and diagonal blocks are stored whole: a
norm or dot product of packed vectors would depend on the tile size, and so would DIIS's
extrapolation and the convergence test (tile 4 and tile 16 once converged to energies 8.8e-9 Eh
apart). Each element is therefore weighted by the square root of its block's orbit size
(``Tensor.packed_weights``), which makes every dot product the dense tensors' own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tilecc.tensor import Tensor


class AmplitudeVectors:
    """Packing of amplitude tensors of one structure (``templates``) into weighted vectors, and
    conversion of such vectors to and from the tile-independent segment tiling (one block per
    spin and irrep segment) that checkpoints store."""

    def __init__(self, templates: Sequence[Tensor]) -> None:
        self.templates = list(templates)
        self.weights = [t.packed_weights() for t in self.templates]
        self.sizes = [t.stored_elements for t in self.templates]
        self._segments: list[Tensor] | None = None

    def pack(self, amplitudes: Sequence[Tensor]) -> np.ndarray:
        return np.concatenate([w * a.to_vector() for w, a in zip(self.weights, amplitudes)])

    def unpack_(self, amplitudes: Sequence[Tensor], vector: np.ndarray) -> None:
        for part, w, a in zip(self._split(vector, self.sizes), self.weights, amplitudes):
            a.from_vector_(part / w)

    def to_segments(self, vector: np.ndarray) -> np.ndarray:
        """A packed vector of these tensors as the same vector over the segment tiling."""
        segments = self._segment_templates()
        scratch = [Tensor.like(t) for t in self.templates]
        self.unpack_(scratch, vector)
        out = []
        for tensor, segment in zip(scratch, segments):
            segment.copy_retiled_(tensor)
            out.append(segment.packed_weights() * segment.to_vector())
        return np.concatenate(out) if out else np.zeros(0)

    def from_segments(self, vector: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`to_segments`, into this tiling."""
        segments = self._segment_templates()
        scratch = [Tensor.like(t) for t in self.templates]
        sizes = [s.stored_elements for s in segments]
        for part, segment, tensor in zip(self._split(vector, sizes), segments, scratch):
            segment.from_vector_(part / segment.packed_weights())
            tensor.copy_retiled_(segment)
        return self.pack(scratch)

    def _segment_templates(self) -> list[Tensor]:
        if self._segments is None:
            self._segments = [t.retiled(None) for t in self.templates]
        return self._segments

    @staticmethod
    def _split(vector: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
        if len(vector) != sum(sizes):
            raise ValueError(
                f"an amplitude vector of {len(vector)} elements does not fit tensors of "
                f"{sum(sizes)}; it belongs to another calculation."
            )
        return np.split(vector, np.cumsum(sizes)[:-1])
