"""`read_on_host`: the values of a validation phase's metrics, summed over processes, in one read."""
from __future__ import annotations

from typing import Callable, Sequence

import torch

from .base import StreamingMetric
from .regression import Denormalized


def read_on_host(metrics: dict, *sums: torch.Tensor,
                 sum_over_processes: Callable[[Sequence[torch.Tensor]], Sequence[torch.Tensor]] | None = None,
                 ) -> tuple[dict[str, float], list[float]]:
    """Every metric's value as a float, and each of `sums` (tensors on the metrics' device), over
    all processes, read back to the host in one transfer: one sync per validation phase on a GPU,
    where reading each value and each metric's `invalid` flag apart would take one sync each.

    `sum_over_processes` is the learner's ``backend.sum_tensors`` (default: one process, nothing
    to add). Through it, the counts of each metric of this package (or `Denormalized` around one),
    its `invalid` flag and `sums` are added over the processes, and the values are computed from
    the sums: the metric of the whole dataset, by the same code in one process and in many. A set
    flag (on any process) raises the metric's error once the values are read. Any other metric (a
    user's ``torchmetrics.Metric``, which syncs itself) is computed as it is, by `compute()`."""
    streaming = {name: _streaming(m) for name, m in metrics.items()}
    local: list[torch.Tensor] = []
    for s in streaming.values():
        if s is not None:
            local += [*s.states(), s.invalid.long()]
    first_sum = len(local)
    local += [torch.as_tensor(v) for v in sums]
    summed = list(local if sum_over_processes is None else sum_over_processes(local))
    parts, at, flagged, i = [], {}, [], 0  # at: where each metric's value lies in `parts`
    for name, m in metrics.items():
        s, flag = streaming[name], None
        if s is None:
            value = m.compute()
        else:
            n = len(s.states())
            value, flag = s.compute_from(summed[i:i + n]), summed[i + n]
            i += n + 1
        if not torch.is_tensor(value) or value.numel() != 1:
            value = torch.as_tensor(float(value))  # a value that is not one number fails here, as float() would
        at[name] = len(parts)
        parts.append(value.reshape(1))
        if flag is not None:
            flagged.append((s, len(parts)))
            parts.append(flag.reshape(1))
    first_read_sum = len(parts)
    parts += [t.reshape(1) for t in summed[first_sum:]]
    if not parts:
        return {}, []
    device = next((p.device for p in parts if p.device.type != "cpu"), torch.device("cpu"))
    dtype = torch.float32 if device.type == "mps" else torch.float64  # MPS has no float64; values are float32
    host = torch.cat([p.to(device=device, dtype=dtype) for p in parts]).tolist()
    for s, flag in flagged:
        s.raise_if_invalid(host[flag])
    return {name: host[j] for name, j in at.items()}, host[first_read_sum:]


def _streaming(metric) -> StreamingMetric | None:
    """The StreamingMetric that computes `metric` (itself, or inside Denormalized), else None."""
    while isinstance(metric, Denormalized):
        metric = metric.metric
    return metric if isinstance(metric, StreamingMetric) else None
