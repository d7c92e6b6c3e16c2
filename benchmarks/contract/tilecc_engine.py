"""The competitor under test: tilecc executing one term with a reused plan."""

from __future__ import annotations

from workloads import Workload

import tilecc
from tilecc.measure import best_time


def measure(work: Workload, repeats: int) -> dict[str, float]:
    """Best-of-``repeats`` time of r += a * b (the plan is built once, before timing)."""
    r, lr, a, la, b, lb = work.build()
    term = a[la] * b[lb]
    plan = tilecc.plan_for(r[lr], term)

    def accumulate() -> None:
        r[lr] += term

    # The warm-up call pages in the tensors and the workers' scratch.
    best = best_time(accumulate, repeats)
    return {
        "seconds": best,
        "executed_flops": plan.executed_flops,
        "dense_flops": plan.dense_flops,
        "tasks": plan.num_tasks,
        "products": plan.num_products,
        "permuted_operands": plan.permuted_operands,
        "inspector_seconds": plan.inspector_seconds,
        "tilecc_gflops": plan.executed_flops / best * 1e-9,
    }
