"""What spin, point-group and permutational symmetry save on a CCSD ladder term.

Spin orbitals with C2v irreps, amplitudes antisymmetric in (i,j) and (a,b): the plan reports the
flops it executes against the dense contraction, and the tensors what they store.

Run: .venv/bin/python examples/10-symmetry_savings.py
"""

import tilecc

occ_irreps = [0, 0, 0, 1, 2, 3]  # one irrep per spatial orbital (PySCF's C2v numbering)
vir_irreps = [p % 4 for p in range(30)]
o = tilecc.Space.spin_orbitals(occ_irreps, tile=8, kind="occupied", name="o")
v = tilecc.Space.spin_orbitals(vir_irreps, tile=8, kind="virtual", name="v")

t2 = tilecc.Tensor([o, o, v, v], tilecc.antisymmetric_pairs(), name="t2")
eri = tilecc.Tensor([v, v, v, v], tilecc.antisymmetric_pairs(), name="<ab||cd>")
r2 = tilecc.Tensor.like(t2, name="r2")
t2.fill_random_(seed=1)
eri.fill_random_(seed=2)

term = 0.5 * t2["ijcd"] * eri["abcd"]
r2["ijab"] = term
plan = tilecc.plan_for(r2["ijab"], term)
for tensor in (t2, eri):
    report = tensor.storage_report()
    print(
        f"{tensor.name}: stores {report['stored_elements']:,} of {report['dense_elements']:,} "
        f"elements ({100 * report['stored_fraction']:.2f}%)"
    )
print(
    f"ladder: executes {plan.executed_flops:.3g} of {plan.dense_flops:.3g} dense flops "
    f"({100 * plan.executed_flops / plan.dense_flops:.3f}%) in {plan.num_tasks} tasks"
)
