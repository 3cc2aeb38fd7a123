"""Where the model runs: devices, precision and multi-process training.

Anything beyond one process in fp32 goes through Lightning Fabric (``lightning_fabric``): GPUs,
mixed precision, DDP / FSDP strategies, many nodes. Fabric is imported only then: a single CPU
process in full precision is exactly ``model.to("cpu")``, and importing ``lightning_fabric``
(which also imports torchmetrics) costs about a second of start-up that such a run would pay for
nothing. Both backends offer the same methods, so the loop never knows which one it has.
"""
from __future__ import annotations

import contextlib
import os

import torch

from ..gc_pause import import_paused
from .precision import auto_precision


class PlainBackend:
    """One process, one device, full precision: no Fabric needed."""

    def __init__(self, device: str = "cpu"):
        self.device = torch.device(device)
        self.is_global_zero = True
        self.world_size = 1
        self.global_rank = 0

    def setup_module(self, model):
        return model.to(self.device)

    def setup_optimizer(self, optimizer):
        return optimizer

    def setup_dataloader(self, loader):
        return loader

    def to_device(self, batch):
        if self.device.type == "cpu":
            return batch
        return tuple(t.to(self.device, non_blocking=True) for t in batch)

    def backward(self, loss):
        loss.backward()

    def autocast(self):
        return contextlib.nullcontext()

    grad_scaler = None  # full precision: no loss scaling

    def all_reduce_mean(self, value: float) -> float:
        return value

    def all_reduce_sum(self, *values: float) -> tuple[float, ...]:
        return tuple(float(v) for v in values)

    def all_reduce_max(self, value: float) -> float:
        return value

    def barrier(self) -> None:
        """Nothing to wait for in one process."""

    def __repr__(self):
        return f"PlainBackend({self.device})"


class FabricBackend:
    """Lightning Fabric: accelerator, devices, strategy and precision as Fabric understands them."""

    def __init__(self, accelerator="auto", devices=1, strategy="auto", precision="32-true", num_nodes=1):
        Fabric = import_paused("lightning_fabric").Fabric  # hotstart/gc_pause.py

        self.fabric = Fabric(accelerator=accelerator, devices=devices, strategy=strategy, precision=precision,
                             num_nodes=num_nodes)
        self.precision = precision
        if self.fabric.world_size > 1:
            # a script is re-launched once per extra process (Lightning's way); under torchrun or
            # SLURM the processes exist already and Fabric only joins the process group
            self.fabric.launch()
        self.device = self.fabric.device
        self.is_global_zero = self.fabric.is_global_zero
        self.world_size = self.fabric.world_size
        self.global_rank = self.fabric.global_rank

    def setup_module(self, model):
        return self.fabric.setup_module(model)

    def setup_optimizer(self, optimizer):
        return self.fabric.setup_optimizers(optimizer)

    def setup_dataloader(self, loader):
        """Across processes, each takes its own shard (learner/data.py `shard_loader`: a seeded
        shuffle per epoch for training, disjoint and unpadded for validation, so that every
        validation sample is counted once)."""
        if self.world_size > 1:
            from .data import shard_loader

            loader = shard_loader(loader, rank=self.global_rank, world_size=self.world_size)
        return self.fabric.setup_dataloaders(loader, move_to_device=True, use_distributed_sampler=False)

    def to_device(self, batch):
        return self.fabric.to_device(batch)

    def backward(self, loss):
        self.fabric.backward(loss)

    def autocast(self):
        return self.fabric.autocast()

    @property
    def grad_scaler(self):
        """The GradScaler of fp16 mixed precision (it skips steps with infinite gradients), or None."""
        return getattr(self.fabric.strategy.precision, "scaler", None)

    def all_reduce_mean(self, value: float) -> float:
        if self.world_size == 1:
            return value
        return float(self.fabric.all_reduce(torch.tensor(value, device=self.device), reduce_op="mean"))

    def all_reduce_sum(self, *values: float) -> tuple[float, ...]:
        """Sums over all processes, in float64 (exact for counts, and for sums of a few thousand losses)."""
        if self.world_size == 1:
            return tuple(float(v) for v in values)
        t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=self.device)
        return tuple(float(v) for v in self.fabric.all_reduce(t, reduce_op="sum"))

    def all_reduce_max(self, value: float) -> float:
        if self.world_size == 1:
            return value
        import torch.distributed as dist

        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t[0])

    def barrier(self) -> None:
        """Every process waits here (e.g. while the first one writes a checkpoint)."""
        if self.world_size > 1:
            self.fabric.barrier()

    def no_backward_sync(self, model, skip: bool):
        """Gradient accumulation: no all-reduce for a batch that does not step (Fabric's context)."""
        return self.fabric.no_backward_sync(model, enabled=skip)

    def __repr__(self):
        return f"FabricBackend({self.device}, precision={self.precision!r})"


def launched_processes() -> tuple[int, int] | None:
    """(processes per node, nodes) when this process was started by torchrun or SLURM as one of
    several, else None; this tells `make_backend` to build a Fabric of that size, so that a script
    needs no change to run under torchrun.

    Detected as Fabric detects them, so both agree: torchrun by torch's own
    ``is_torchelastic_launched`` (what ``TorchElasticEnvironment.detect()`` calls), SLURM by
    ``SLURMEnvironment.detect()``. Fabric is imported only when SLURM says there are several tasks:
    a plain one-process run does not pay for importing it."""
    env = os.environ
    if torch.distributed.is_available() and torch.distributed.is_torchelastic_launched():
        world, local = int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_WORLD_SIZE", 1))
        return (local, max(1, world // max(1, local))) if world > 1 else None
    if int(env.get("SLURM_NTASKS", 1)) > 1:
        from lightning_fabric.plugins.environments import SLURMEnvironment

        if SLURMEnvironment.detect():  # srun started us (not an interactive allocation: job name bash / interactive)
            per_node = int(env.get("SLURM_NTASKS_PER_NODE", "1").split("(")[0])
            return per_node, int(env.get("SLURM_NNODES", 1))
    return None

def make_backend(accelerator=None, devices=None, strategy=None, precision=None, num_nodes=None):
    """Pick the backend: a GPU when one is there (unless told otherwise), Fabric when it is needed.

    ``precision="auto"`` becomes bf16-mixed on hardware with bf16 units, else fp32
    (learner/precision.py, with the measurements); ``None`` is fp32.

    Several processes: ``devices=2`` (and ``strategy="ddp"``, the default then) re-launches the
    script; under torchrun or SLURM the launcher's process count is used (`launched_processes`)."""
    launched = launched_processes()
    if launched is not None and devices in (None, 1) and num_nodes in (None, 1):
        devices, num_nodes = launched
        strategy = strategy if strategy not in (None, "auto") else "ddp"
    if (devices not in (None, 1) or (num_nodes or 1) > 1) and strategy in (None, "auto"):
        strategy = "ddp"
    acc = accelerator or "auto"
    if acc == "auto":
        acc = "cuda" if torch.cuda.is_available() else "cpu"
    if acc == "gpu":
        acc = "cuda"
    precision = str(precision) if precision is not None else "32-true"
    if precision == "auto":  # bf16 mixed precision where there are bf16 units (learner/precision.py)
        precision = auto_precision(acc)
    simple = (acc == "cpu" and precision in ("32-true", "32") and devices in (None, 1)
              and strategy in (None, "auto") and (num_nodes or 1) == 1)
    if simple:
        return PlainBackend("cpu")
    return FabricBackend(accelerator=acc, devices=devices or 1, strategy=strategy or "auto", precision=precision,
                         num_nodes=num_nodes or 1)
