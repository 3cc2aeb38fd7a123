"""Evaluation across processes with no collective inside its loop.

Each process evaluates its own shard of the validation set (learner/data.py `ShardSampler`:
disjoint and unpadded, so that the metrics count every sample once), and the shards may differ by
a batch; a split smaller than the number of processes leaves some with none at all. Through DDP's
wrapper, the first forward pass after training broadcasts the model's buffers (BatchNorm's running
statistics) from the first process: a collective inside the loop. With 1 validation sample on 2
processes, the first process waited in that broadcast while the second, which had no batch, waited
in the guard's all-reduce at the phase's end: a deadlock, until gloo's 30-minute timeout.

So an evaluation runs the model outside that wrapper (`EvalForward`, what
``Backend.eval_module`` returns under DDP: Fabric's precision handling, without DDP), and a
validation phase takes the first process's buffers once, at its start, on every process
(`take_first_process_buffers`): what DDP's broadcast did, so every process still validates the
same model, and the phase's only collectives are the sums at its end (the metrics, the guard),
which every process reaches whatever number of batches it had. Gradients are never computed in an
evaluation, so DDP has nothing else to do there.
"""
from __future__ import annotations

import torch


class EvalForward(torch.nn.Module):
    """`module`'s forward pass with a Lightning Fabric `precision` plugin's input conversion,
    forward context (autocast) and output conversion, as Fabric's own module wrapper runs it, but
    without the strategy's wrapper (DDP) in between. ``.module`` is `module`, as on Fabric's
    wrapper, so `Learner.task_model` finds the user's model through either."""

    def __init__(self, module: torch.nn.Module, precision):
        super().__init__()
        self.module = module
        self.precision = precision

    def forward(self, *args, **kwargs):
        args, kwargs = self.precision.convert_input((args, kwargs))
        with self.precision.forward_context():
            output = self.module(*args, **kwargs)
        return self.precision.convert_output(output)


def take_first_process_buffers(learner) -> None:
    """Overwrite every process's model buffers with the first process's (one message per dtype;
    nothing in one process). A collective: every process calls it, at a validation phase's start."""
    learner.backend.broadcast_(list(learner.task_model().buffers()), src=0)
