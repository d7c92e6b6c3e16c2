"""A contraction with labelled tensors, checked against numpy.einsum.

Run: .venv/bin/python examples/00-simple_contraction.py
"""

import numpy as np

import tilecc

o = tilecc.Space.spatial(6, tile=4, kind="occupied", name="o")
v = tilecc.Space.spatial(20, tile=8, kind="virtual", name="v")

t2 = tilecc.Tensor([o, o, v, v], name="t2")
eri = tilecc.Tensor([v, v, v, v], name="vvvv")
r2 = tilecc.Tensor([o, o, v, v], name="r2")
t2.fill_random_(seed=1)
eri.fill_random_(seed=2)

r2["ijab"] = 0.5 * t2["ijcd"] * eri["abcd"]

reference = 0.5 * np.einsum("ijcd,abcd->ijab", t2.to_dense(), eri.to_dense())
print("max |tilecc - einsum| =", np.max(np.abs(r2.to_dense() - reference)))
print(tilecc.plan_for(r2["ijab"], 0.5 * t2["ijcd"] * eri["abcd"]).summary())
