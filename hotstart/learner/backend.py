"""Where the model runs: devices, precision and multi-process training.

One CPU process in fp32 or bf16 mixed precision is a `PlainBackend`: ``model.to("cpu")``, and for
bf16 ``torch.autocast`` (learner/mixed_precision.py, the same numbers as Fabric's plugin).
Anything else goes through Lightning Fabric (``lightning_fabric``): GPUs, fp16 and the "-true"
precisions, DDP / FSDP strategies, many nodes. Fabric is imported only then: importing
``lightning_fabric`` (which also imports torchmetrics) costs about 3 s of CPU time at start-up
(measured in mixed_precision.py) that a one-process CPU run would pay for nothing.

`Backend` declares what the loop, the callbacks and the metrics may ask of a backend, once, with
the reason for each member. Lightning Fabric's rule applies: every member exists on every
backend (`PlainBackend`, `FabricBackend`), so no caller probes with ``hasattr`` / ``getattr``;
a collective on one process is the identity (tests/test_learner_backend.py checks both
backends against the declaration).
"""
from __future__ import annotations

import abc
import contextlib
import os
from typing import Sequence

import torch

from ..errors import UsageError
from ..gc_pause import import_paused
from ..precisions import BF16_MIXED, FP32, canonical_precision
from .mixed_precision import MixedPrecisionModule
from .precision import auto_precision


class Backend(abc.ABC):
    """What a backend offers; `PlainBackend` and `FabricBackend` implement all of it.

    Attributes (set by each backend's constructor):

    - ``device``: the ``torch.device`` of the model and batches;
    - ``precision``: Fabric's precision name (``"32-true"``, ``"bf16-mixed"``, ...);
    - ``world_size``, ``global_rank``: the processes in all, and this one's index;
    - ``is_global_zero``: whether this is the first process (it prints and writes).
    """

    device: torch.device
    precision: str
    world_size: int
    global_rank: int
    is_global_zero: bool

    # --- set-up ------------------------------------------------------------------------------
    @abc.abstractmethod
    def setup_module(self, model):
        """The model, on the device (wrapped for the strategy: DDP, ...)."""

    @abc.abstractmethod
    def setup_optimizer(self, optimizer):
        """The optimizer, as the strategy needs it."""

    @abc.abstractmethod
    def setup_dataloader(self, loader):
        """The loader this process reads: across processes, its own shard."""

    @abc.abstractmethod
    def to_device(self, batch):
        """A batch (tuple of tensors) on the device."""

    @abc.abstractmethod
    def eval_module(self, model):
        """The module an evaluation calls instead of the set-up `model`: under DDP, the model
        without DDP's wrapper (with the precision's conversions), so that an evaluation makes no
        collective and processes may read different numbers of batches (learner/eval_forward.py
        says why); otherwise `model` itself."""

    # --- a training step ---------------------------------------------------------------------
    @abc.abstractmethod
    def autocast(self):
        """The context of forward passes (mixed precision's autocast; a no-op in full precision)."""

    @abc.abstractmethod
    def backward(self, loss) -> None:
        """``loss.backward()``, scaled where mixed precision scales the loss."""

    @abc.abstractmethod
    def no_backward_sync(self, model, skip: bool):
        """Context of a batch that does not step (gradient accumulation): when `skip`, its gradients
        stay local to the process (no all-reduce); a no-op in one process."""

    @abc.abstractmethod
    def clip_gradients(self, model, optimizer, max_norm: float) -> torch.Tensor:
        """Clip the gradients' global norm to `max_norm` (unscaled first under fp16); returns the
        norm before clipping."""

    @property
    @abc.abstractmethod
    def grad_scaler(self):
        """fp16 mixed precision's ``GradScaler`` (it skips steps with infinite gradients), else None."""

    # --- collectives: the identity in one process --------------------------------------------
    @abc.abstractmethod
    def all_reduce_sum(self, *values: float) -> tuple[float, ...]:
        """Each of `values` (host numbers) summed over all processes, in float64 (exact for counts)."""

    @abc.abstractmethod
    def all_reduce_max(self, value: float) -> float:
        """`value` (a host number) maximized over all processes."""

    @abc.abstractmethod
    def sum_tensors(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Each tensor summed element-wise over all processes, in its own dtype (integer counts stay
        exact), on its device: one collective per dtype, no host read. One process: the tensors
        themselves. The inputs are not changed."""

    @abc.abstractmethod
    def broadcast_(self, tensors: Sequence[torch.Tensor], src: int = 0) -> None:
        """Overwrite each tensor, in place, with process `src`'s (one message per dtype)."""

    @abc.abstractmethod
    def barrier(self) -> None:
        """Every process waits here (e.g. while the first one writes a checkpoint)."""


def _group_by_dtype(tensors: Sequence[torch.Tensor]) -> dict:
    """{dtype: [index, ...]}: the tensors that one flat collective can carry together."""
    groups: dict = {}
    for i, t in enumerate(tensors):
        groups.setdefault(t.dtype, []).append(i)
    return groups


def _flat_collective(tensors: Sequence[torch.Tensor], run, *, in_place: bool) -> list[torch.Tensor]:
    """Run `run(flat)` (an in-place collective on one flat tensor) once per dtype over `tensors`;
    the results come back in the tensors' shapes (written into them when `in_place`)."""
    out = list(tensors)
    for dtype, idx in _group_by_dtype(tensors).items():
        flat = torch.cat([tensors[i].reshape(-1) for i in idx])
        run(flat)
        offset = 0
        for i in idx:
            t = tensors[i]
            part = flat[offset:offset + t.numel()].view_as(t)
            offset += t.numel()
            if in_place:
                t.copy_(part)
            else:
                out[i] = part
    return out


PLAIN_PRECISIONS = (FP32, BF16_MIXED)
"""The precisions a `PlainBackend` runs (fp32, and bf16 mixed through ``torch.autocast``)."""


class PlainBackend(Backend):
    """One process, one device, fp32 or bf16 mixed precision: no Fabric needed.

    bf16-mixed wraps the model in a `MixedPrecisionModule` (inputs to bf16, autocast, outputs to
    float32: Fabric's ``bf16-mixed``, without importing Fabric)."""

    def __init__(self, device: str = "cpu", precision: str = FP32):
        self.device = torch.device(device)
        self.precision = canonical_precision(precision)
        if self.precision not in PLAIN_PRECISIONS:
            raise UsageError(f"PlainBackend runs precision {' or '.join(map(repr, PLAIN_PRECISIONS))}, "
                             f"not {precision!r}: make_backend gives other precisions to Lightning Fabric")
        self.is_global_zero = True
        self.world_size = 1
        self.global_rank = 0

    def setup_module(self, model):
        model = model.to(self.device)
        if self.precision == BF16_MIXED:
            return MixedPrecisionModule(model, self.device.type)
        return model

    def setup_optimizer(self, optimizer):
        return optimizer

    def setup_dataloader(self, loader):
        return loader

    def to_device(self, batch):
        if self.device.type == "cpu":
            return batch
        return tuple(t.to(self.device, non_blocking=True) for t in batch)

    def eval_module(self, model):
        return model  # one process: no wrapper that synchronizes anything

    def autocast(self):
        if self.precision == BF16_MIXED:
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def backward(self, loss) -> None:
        loss.backward()  # bf16 needs no loss scaling (nor does Fabric's bf16-mixed)

    def no_backward_sync(self, model, skip: bool):
        return contextlib.nullcontext()

    def clip_gradients(self, model, optimizer, max_norm: float) -> torch.Tensor:
        return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)

    @property
    def grad_scaler(self):
        return None  # full precision: no loss scaling

    def all_reduce_sum(self, *values: float) -> tuple[float, ...]:
        return tuple(float(v) for v in values)

    def all_reduce_max(self, value: float) -> float:
        return value

    def sum_tensors(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return list(tensors)

    def broadcast_(self, tensors: Sequence[torch.Tensor], src: int = 0) -> None:
        """Nothing to send in one process."""

    def barrier(self) -> None:
        """Nothing to wait for in one process."""

    def __repr__(self):
        return f"PlainBackend({self.device})" if self.precision == FP32 else \
            f"PlainBackend({self.device}, precision={self.precision!r})"


class FabricBackend(Backend):
    """Lightning Fabric: accelerator, devices, strategy and precision as Fabric understands them.

    ``backend.fabric`` is the ``lightning_fabric.Fabric`` itself, for a user's own loop; hotstart
    goes through the `Backend` methods only."""

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

    def eval_module(self, model):
        from lightning_fabric.strategies import DDPStrategy

        if self.world_size == 1 or not isinstance(self.fabric.strategy, DDPStrategy):
            return model  # FSDP / DeepSpeed shard the weights: their wrapper is the forward pass itself
        from .eval_forward import EvalForward

        return EvalForward(model.module, self.fabric.strategy.precision)  # Fabric's wrapper's .module: the user's

    def autocast(self):
        return self.fabric.autocast()

    def backward(self, loss) -> None:
        self.fabric.backward(loss)

    def no_backward_sync(self, model, skip: bool):
        return self.fabric.no_backward_sync(model, enabled=skip)  # Fabric's: a no-op on one device

    def clip_gradients(self, model, optimizer, max_norm: float) -> torch.Tensor:
        return self.fabric.clip_gradients(model, optimizer, max_norm=max_norm)

    @property
    def grad_scaler(self):
        # Fabric's precision plugins: only fp16's MixedPrecision has a `scaler` (others: None)
        return getattr(self.fabric.strategy.precision, "scaler", None)

    def all_reduce_sum(self, *values: float) -> tuple[float, ...]:
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

    def sum_tensors(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if self.world_size == 1:
            return list(tensors)
        import torch.distributed as dist

        return _flat_collective(tensors, lambda flat: dist.all_reduce(flat, op=dist.ReduceOp.SUM), in_place=False)

    def broadcast_(self, tensors: Sequence[torch.Tensor], src: int = 0) -> None:
        if self.world_size == 1:
            return
        import torch.distributed as dist

        _flat_collective(tensors, lambda flat: dist.broadcast(flat, src=src), in_place=True)

    def barrier(self) -> None:
        if self.world_size > 1:
            self.fabric.barrier()

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

def resolve_accelerator(accelerator=None) -> str:
    """The accelerator a run gets: ``None`` / "auto" is "cuda" when a GPU is there, else "cpu";
    "gpu" is "cuda"; anything else as given (Fabric checks it)."""
    acc = accelerator or "auto"
    if acc == "auto":
        acc = "cuda" if torch.cuda.is_available() else "cpu"
    return "cuda" if acc == "gpu" else acc


ACCELERATORS = ("cpu", "cuda", "mps", "tpu")
"""The device kinds `tasklearner(device=...)` takes once resolved (``"gpu"`` is ``"cuda"``, ``"auto"``
the best one here): Fabric's accelerators."""


def check_accelerator(accelerator: str, argument: str = "device") -> None:
    """Refuse, naming `argument`, a device kind that is unknown or that this machine lacks, before
    Fabric would (its message names its own ``accelerator`` argument, not the one the user wrote).
    A Fabric `Accelerator` object is left to Fabric."""
    if not isinstance(accelerator, str):
        return
    if accelerator not in ACCELERATORS:
        raise UsageError(f"{argument} must be one of 'auto', 'gpu', {', '.join(repr(a) for a in ACCELERATORS)}, "
                         f"got {accelerator!r}")
    if accelerator == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"{argument} asks for a CUDA GPU, and torch sees none here (torch.cuda.is_available() is "
                         "False); leave it out, or say 'cpu', to train on the CPU")
    if accelerator == "mps" and not torch.backends.mps.is_available():
        raise UsageError(f"{argument} asks for Apple's MPS, which this machine lacks; leave it out to train on the CPU")


def make_backend(accelerator=None, devices=None, strategy=None, precision=None, num_nodes=None):
    """Pick the backend: a GPU when one is there (unless told otherwise), Fabric when it is needed.

    ``precision="auto"`` becomes bf16-mixed on hardware with bf16 units, else fp32
    (learner/precision.py, with the measurements); ``None`` is fp32 (`tasklearner` passes its
    task's default instead). One CPU process in fp32 or bf16-mixed is a `PlainBackend`.

    Several processes: ``devices=2`` (and ``strategy="ddp"``, the default then) re-launches the
    script; under torchrun or SLURM the launcher's process count is used (`launched_processes`)."""
    launched = launched_processes()
    if launched is not None and devices in (None, 1) and num_nodes in (None, 1):
        devices, num_nodes = launched
        strategy = strategy if strategy not in (None, "auto") else "ddp"
    if (devices not in (None, 1) or (num_nodes or 1) > 1) and strategy in (None, "auto"):
        strategy = "ddp"
    acc = resolve_accelerator(accelerator)
    precision = canonical_precision(precision if precision is not None else FP32)
    if precision == "auto":  # bf16 mixed precision where there are bf16 units (learner/precision.py)
        precision = auto_precision(acc)
    simple = (acc == "cpu" and precision in PLAIN_PRECISIONS and devices in (None, 1)
              and strategy in (None, "auto") and (num_nodes or 1) == 1)
    if simple:
        return PlainBackend("cpu", precision)
    return FabricBackend(accelerator=acc, devices=devices or 1, strategy=strategy or "auto", precision=precision,
                         num_nodes=num_nodes or 1)
