"""The machine a simulation runs on: ranks per node, the latency and bandwidth of a transfer within
a node and between nodes, and how long the shared task counter takes to serve one fetch. Read
from a JSON file (two are bundled: ``infiniband``, a fat-tree EDR InfiniBand cluster, and
``ethernet``, a 10 GbE one; figures are those networks' usual ones) or given as options."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).parent / "platforms"


@dataclass(frozen=True)
class Platform:
    name: str
    ranks_per_node: int
    inter_node_latency_us: float
    inter_node_gbps: float
    intra_node_latency_us: float
    intra_node_gbps: float
    counter_service_us: float
    #: Cores per node: a node running more workers than it has cores runs each task that much
    #: longer (0: as many as it runs).
    cores_per_node: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.cores_per_node, int) or self.cores_per_node < 0:
            raise ValueError(
                f"platform {self.name!r}: cores_per_node must be a whole number (0: enough), "
                f"not {self.cores_per_node!r}."
            )
        if not isinstance(self.ranks_per_node, int) or self.ranks_per_node < 1:
            raise ValueError(
                f"platform {self.name!r}: ranks_per_node must be a whole number of at least 1, "
                f"not {self.ranks_per_node!r}."
            )
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith(("_us", "_gbps")) and (
                not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0
            ):
                raise ValueError(
                    f"platform {self.name!r}: {f.name} must be a non-negative number, not "
                    f"{value!r}."
                )
        for bandwidth in ("inter_node_gbps", "intra_node_gbps"):
            if getattr(self, bandwidth) == 0:
                raise ValueError(f"platform {self.name!r}: {bandwidth} must be above 0.")

    def with_options(self, **given: Any) -> Platform:
        """This platform with the options that were given (None: keep)."""
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    def slowdown(self, workers_per_node: int) -> float:
        """How much longer a task takes when a node runs this many workers at once."""
        if self.cores_per_node == 0:
            return 1.0
        return max(1.0, workers_per_node / self.cores_per_node)

    def transfer_seconds(self, nbytes: int, inter_node: bool) -> tuple[float, float]:
        """(latency, time on the wire) of moving ``nbytes`` within a node or between nodes."""
        if inter_node:
            return self.inter_node_latency_us * 1e-6, nbytes / (self.inter_node_gbps * 1e9)
        return self.intra_node_latency_us * 1e-6, nbytes / (self.intra_node_gbps * 1e9)


def load_platform(name_or_path: str) -> Platform:
    """A bundled platform by name, or one from a JSON file with the same fields."""
    path = BUNDLED / f"{name_or_path}.json"
    if not path.is_file():
        path = Path(name_or_path)
    if not path.is_file():
        bundled = ", ".join(sorted(p.stem for p in BUNDLED.glob("*.json")))
        raise ValueError(
            f"no platform {name_or_path!r}: give a bundled one ({bundled}) or a JSON file with "
            f"the fields of tilecc.simulate.Platform."
        )
    try:
        data = json.loads(path.read_text())
        return Platform(**data)
    except (json.JSONDecodeError, TypeError) as exc:
        names = ", ".join(f.name for f in fields(Platform))
        raise ValueError(
            f"the platform file {path} is not a JSON object of the fields {names} ({exc})."
        ) from None
