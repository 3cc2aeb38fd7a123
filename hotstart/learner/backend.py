"""Where the model runs: devices, precision and multi-process training.

Anything beyond one process in fp32 goes through Lightning Fabric (``lightning_fabric``): GPUs,
mixed precision, DDP / FSDP strategies, many nodes. Fabric is imported only then: a single CPU
process in full precision is exactly ``model.to("cpu")``, and importing ``lightning_fabric``
(which also imports torchmetrics) costs about a second of start-up that such a run would pay for
nothing. Both backends offer the same methods, so the loop never knows which one it has.
"""
from __future__ import annotations

import contextlib

import torch


class PlainBackend:
    """One process, one device, full precision: no Fabric needed."""

    def __init__(self, device: str = "cpu"):
        self.device = torch.device(device)
        self.is_global_zero = True
        self.world_size = 1

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

    def barrier(self) -> None:
        """Nothing to wait for in one process."""

    def __repr__(self):
        return f"PlainBackend({self.device})"


class FabricBackend:
    """Lightning Fabric: accelerator, devices, strategy and precision as Fabric understands them."""

    def __init__(self, accelerator="auto", devices=1, strategy="auto", precision="32-true"):
        from lightning_fabric import Fabric

        self.fabric = Fabric(accelerator=accelerator, devices=devices, strategy=strategy, precision=precision)
        self.precision = precision
        if self.fabric.world_size > 1:
            self.fabric.launch()
        self.device = self.fabric.device
        self.is_global_zero = self.fabric.is_global_zero
        self.world_size = self.fabric.world_size

    def setup_module(self, model):
        return self.fabric.setup_module(model)

    def setup_optimizer(self, optimizer):
        return self.fabric.setup_optimizers(optimizer)

    def setup_dataloader(self, loader):
        # our loaders are seeded and shuffled by us; Fabric adds a DistributedSampler when needed
        return self.fabric.setup_dataloaders(loader, move_to_device=True)

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

    def barrier(self) -> None:
        """Every process waits here (e.g. while the first one writes a checkpoint)."""
        if self.world_size > 1:
            self.fabric.barrier()

    def no_backward_sync(self, model, skip: bool):
        """Gradient accumulation: no all-reduce for a batch that does not step (Fabric's context)."""
        return self.fabric.no_backward_sync(model, enabled=skip)

    def __repr__(self):
        return f"FabricBackend({self.device}, precision={self.precision!r})"


def make_backend(accelerator=None, devices=None, strategy=None, precision=None):
    """Pick the backend: a GPU when one is there (unless told otherwise), Fabric when it is needed."""
    acc = accelerator or "auto"
    if acc == "auto":
        acc = "cuda" if torch.cuda.is_available() else "cpu"
    if acc == "gpu":
        acc = "cuda"
    precision = str(precision) if precision is not None else "32-true"
    simple = (acc == "cpu" and precision in ("32-true", "32") and devices in (None, 1)
              and strategy in (None, "auto"))
    if simple:
        return PlainBackend("cpu")
    return FabricBackend(accelerator=acc, devices=devices or 1, strategy=strategy or "auto", precision=precision)
