"""Paper 004's CCD sub-computation (section 6.4), shared by the benchmarks that run it (the
policies' and out of core): O and V cut into four symmetry segments, (40, 40, 20, 20) and
(100, 100, 60, 60), each an irrep of D2, their lengths multiplied by ``fraction``:

    i1[h6,p3,h1,p5]  = v1[h6,p3,h1,p5]
    i1[h6,p3,h1,p5] += t[p3,p7,h1,h8] * v2[h6,h8,p5,p7]
    i0[p3,p4,h1,h2] += t[p3,p5,h1,h6] * i1[h6,p4,h2,p5]

Labels: h1, h2, h6, h8 -> i, j, m, n (occupied); p3, p4, p5, p7 -> a, b, c, d.
"""

from __future__ import annotations

from dataclasses import dataclass

import tilecc

SEGMENTS = {"occupied": (40, 40, 20, 20), "virtual": (100, 100, 60, 60)}


@dataclass
class CcdTensors:
    t: tilecc.Tensor
    v1: tilecc.Tensor
    v2: tilecc.Tensor
    i1: tilecc.Tensor
    i0: tilecc.Tensor

    def initialise(self) -> None:
        """The first operation: the intermediate from v1 (data parallel)."""
        self.i1["maic"] = self.v1["maic"]

    def contract(self) -> None:
        """The two contractions."""
        self.i1["maic"] += self.t["adin"] * self.v2["mncd"]
        self.i0["abij"] += self.t["acim"] * self.i1["mbjc"]

    @property
    def stored_bytes(self) -> int:
        return 8 * sum(x.stored_elements for x in (self.t, self.v1, self.v2, self.i1, self.i0))


def ccd_tensors(ctx: tilecc.Context, fraction: float, tile_o: int, tile_v: int) -> CcdTensors:
    """The sub-computation's arrays in ``ctx``, the inputs t, v1, v2 filled at random."""

    def segmented(kind: str, name: str, tile: int) -> tilecc.Space:
        lengths = [round(n * fraction) for n in SEGMENTS[kind]]
        irreps = [irrep for irrep, n in enumerate(lengths) for _ in range(n)]
        return tilecc.Space(irreps, tile=tile, kind=kind, name=name)

    o, v = segmented("occupied", "O", tile_o), segmented("virtual", "V", tile_v)
    x = CcdTensors(
        tilecc.Tensor([v, v, o, o], name="t", context=ctx),
        tilecc.Tensor([o, v, o, v], name="v1", context=ctx),
        tilecc.Tensor([o, o, v, v], name="v2", context=ctx),
        tilecc.Tensor([o, v, o, v], name="i1", context=ctx),
        tilecc.Tensor([v, v, o, o], name="i0", context=ctx),
    )
    for seed, tensor in enumerate((x.t, x.v1, x.v2)):
        tensor.fill_random_(seed)
    return x
