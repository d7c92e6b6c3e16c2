"""The demonstration run by ``make demo``: a CCSD particle-particle ladder contraction on
spin-orbital tensors with point-group and permutational symmetry, checked against numpy.einsum."""

from __future__ import annotations

import time

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tilecc.context import Context
from tilecc.expr import plan_for
from tilecc.space import Space
from tilecc.symmetry import antisymmetric_pairs
from tilecc.tensor import Tensor


def run(console: Console, threads: int | None = None) -> float:
    """Build r2[ijab] = 0.5 t2[ijcd] v[abcd] for an 8-electron C2v-like model and return the
    largest deviation from numpy.einsum on the dense tensors."""
    ctx = Context() if threads is None else Context(threads=threads)
    rng = np.random.default_rng(7)
    occ_irreps = [0, 0, 1, 3]
    vir_irreps = list(rng.integers(0, 4, size=24))
    o = Space.spin_orbitals(
        occ_irreps, energies=np.linspace(-1.5, -0.4, 4), tile=4, kind="occupied", name="o"
    )
    v = Space.spin_orbitals(
        vir_irreps, energies=np.linspace(0.2, 3.0, 24), tile=8, kind="virtual", name="v"
    )
    t2 = Tensor([o, o, v, v], antisymmetric_pairs(), name="t2", context=ctx)
    vv = Tensor([v, v, v, v], antisymmetric_pairs(), name="v", context=ctx)
    r2 = Tensor.like(t2, name="r2")
    t2.fill_random_(seed=1)
    vv.fill_random_(seed=2)

    start = time.perf_counter()
    r2["ijab"] = 0.5 * t2["ijcd"] * vv["abcd"]
    seconds = time.perf_counter() - start

    reference = 0.5 * np.einsum("ijcd,abcd->ijab", t2.to_dense(), vv.to_dense(), optimize=True)
    error = float(np.max(np.abs(r2.to_dense() - reference)))
    plan = plan_for(r2["ijab"], 0.5 * t2["ijcd"] * vv["abcd"])

    table = Table(
        title=escape("tilecc demo: r2[ijab] = 0.5 t2[ijcd] v[abcd] (spin orbitals, 4 irreps)")
    )
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for tensor in (t2, vv, r2):
        rep = tensor.storage_report()
        table.add_row(
            f"{tensor.name} stored / dense elements",
            f"{rep['stored_elements']:,} / {rep['dense_elements']:,} "
            f"({100 * rep['stored_fraction']:.1f}%)",
        )
    table.add_row("tasks / block products", f"{plan.num_tasks} / {plan.num_products}")
    table.add_row(
        "executed / dense flops",
        f"{plan.executed_flops:.3g} / {plan.dense_flops:.3g} "
        f"({100 * plan.executed_flops / plan.dense_flops:.2f}%)",
    )
    table.add_row("threads, policy", f"{ctx.threads}, {ctx.policy}")
    table.add_row("contraction time", f"{seconds * 1e3:.2f} ms")
    table.add_row("max |tilecc - numpy.einsum|", f"{error:.2e}")
    console.print(table)
    return error
