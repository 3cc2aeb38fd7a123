"""`Learner`: the training loop, told top to bottom, with events for callbacks.

The override ladder (use the lowest rung that does what you need):

1. ``learner.fit_one_cycle(5)`` / ``fit`` / ``fine_tune``: the usual way.
2. ``callbacks=[...]``: react to events (see callbacks/base.py) without touching the loop, e.g.
   ``EarlyStopping(patience=2)``; cancel with `CancelBatch` / `CancelEpoch` / `CancelFit`.
3. Subclass and override `compute_loss(pred, yb)` for a different objective, `train_step()`
   for a different step (two optimizers, ...; gradient accumulation is ``fit(accumulate=k)``),
   or `valid_step()` for a different evaluation (validate, get_preds, predict and tta all make
   their one forward call through it)::

       class MyLearner(Learner):
           def compute_loss(self, pred, yb):
               return super().compute_loss(pred, yb) + 1e-4 * pred.pow(2).mean()

4. Your own loop: ``learner.model``, ``learner.train_loader``, ``learner.loss_func`` are plain
   PyTorch objects (``learner.setup()`` first puts them on the learner's device).

For evaluation the same ladder has one path: `validate`, `get_preds`, `predict`, `tta`, the
interpretations and `show_results` all call ``run_eval(loader, keep=...)``, whose `keep(out, xb,
yb)` says what to keep of each batch (Keras's ``predict_step``); ``run_eval(events=True)`` is
also a fit's validation phase.

The story of `fit`, top to bottom: it creates the fit's `FitState` (fit_state.py: schedule,
accumulation, steps, seed; what a checkpoint saves), checks that every process runs that same fit
(fit_agreement.py, across processes), restores a checkpoint if asked, then for
each epoch runs `_train_epoch` (every batch through `train_step`) and the validation phase
(`_eval_loop` with events), then `after_epoch` and the epoch's checkpoint. The default callbacks
read the loss without a device-to-host sync per batch (callbacks/recorder.py, nan_guard.py).

The learner never knows what an image is: it sees batches, a model, a loss, metrics and callbacks.
Its `task` (optional) is used only for the metrics' output activation, `predict`, `show_results`,
`save` and `export`. A custom learning-rate schedule is ``fit(schedule=f)`` with
``f(optimizer_step, total_optimizer_steps) -> (lr, momentum or None)``.
"""
from __future__ import annotations

import contextlib
import uuid
from typing import Any, Sequence

import torch

from ..arguments import check_int, check_number
from ..errors import UsageError, UsageTypeError
from .callbacks.base import Callback, CancelBatch, CancelEpoch, CancelFit
from .data import set_epoch
from .fit_agreement import check_processes_agree, fit_fingerprint
from .fit_state import FitState, constant_schedule, declared
from .rng import derive_seed, fresh_seed, seeded_torch_rng
from .optim import as_tuple, check_lr, group_lrs, set_hyper
from .schedule import one_cycle_at


class Learner:
    """A model, its data, a loss and callbacks, and the loop that trains and evaluates them.

    Most learners come from `tasklearner`, which builds the model, the loaders, the loss and the
    metrics from a task and picks the defaults that make a fit fast. Build one directly to train
    your own PyTorch objects with hotstart's loop (schedules, callbacks, checkpoints, processes)::

        learner = Learner(model, train_loader, valid_loader, torch.nn.CrossEntropyLoss(), seed=0)
        learner.fit_one_cycle(3, 1e-3)
        learner.history[-1]   # {"epoch": 2, "train_loss": ..., "valid_loss": ..., "time": ...}

    The learner never knows what an image is: without a `task` it trains and validates, and
    `predict`, `show_results`, `save` and `export` need one (the module docstring has the ladder of
    ways to change the loop). Every fit reads its shuffles and augmentations from seeds derived
    from `seed`, in a forked RNG: the same seed gives the same fit, and the caller's global RNGs
    are untouched.

    Args:
        model (torch.nn.Module): the model. Its layer groups (what `freeze` keeps frozen and a
            ``slice(low, high)`` learning rate spreads over) are a `TaskModel`'s backbone stages
            and head, else its last child module and the children before it
            (models/layer_groups.py).
        train_loader (torch.utils.data.DataLoader | None): the training batches, ``(inputs,
            targets)``; None for a learner that only predicts (`load_learner` without data).
        valid_loader (torch.utils.data.DataLoader | None): the validation batches.
        loss_func (Callable): ``loss_func(pred, targets) -> scalar tensor``; `compute_loss`
            calls it, so a subclass can change the objective there.
        optimizer (str | Callable): ``"adamw"`` (the default, fastai's betas (0.9, 0.99) and eps
            1e-5, torch's fused kernel where it can), ``"adam"``, ``"sgd"`` (momentum 0.9), or a
            callable ``optimizer(param_groups, lr=..., weight_decay=...)``; see learner/optim.py.
        metrics (dict | Callable[[], dict] | None): name -> metric object with torchmetrics'
            protocol, or a callable returning that dict (built at the first validation); each
            becomes a column of the history. None: the loss only.
        callbacks: callbacks (instances, or classes to instantiate) added for every fit, after
            the defaults: `Recorder`, `Metrics`, `NonFiniteGuard` and, with `progress`,
            `Progress`.
        task (SupervisedTask | None): the task the model was built for: its activation feeds the
            metrics and predictions, its ``default_lr`` is `fit_one_cycle`'s default, and `save`,
            `export`, `predict` and `show_results` need it.
        seed: the learner's seed (None: a fresh one from the OS's entropy, kept as ``seed``):
            each fit derives its own from it, so two fits of one learner shuffle differently and
            a learner built again with the same seed repeats them.
        backend (Backend | None): where and how the loop runs: a plain CPU process, or Lightning
            Fabric for GPUs, other precisions and several processes (learner/backend.py). None:
            ``make_backend()``, a GPU in fp32 when there is one, else the CPU in fp32.
        progress: add the `Progress` callback (the choices line, the bars and the epoch table).
        model_config (dict | None): the model's JSON config, saved with it so that `load_learner`
            can rebuild it without unpickling (`tasklearner` fills it).
        wd: the weight decay of every fit that does not give its own (``fit(wd=...)``); 0.01 is
            fastai's default.
        sync_bn: across processes, convert BatchNorm layers to ``SyncBatchNorm`` so they
            normalize with the statistics of the global batch rather than of each process's
            share of it; CUDA only (torch's SyncBatchNorm), a `UsageError` on CPU.
        compiled (CompiledBackbone | None): the compile cache's compiled backbone, when the
            backbone is compiled already (``tasklearner(compile=True)``).
        auto_compile (AutoCompile | None): ``compile="auto"``'s decision maker (compiling.py):
            at each fit's start, once the fit's length is known, it compiles the backbone or not,
            until it has compiled.
        channels_last: batches reach the model in channels_last memory layout
            (learner/memory_format.py): resnet10t at 128x128 trained 1.14x as fast on a 2-core
            EPYC, and 0.92x at 32x32, hence `tasklearner`'s default from 128 px.
        choices (dict | None): what the defaults chose, name -> `Choice`, for the fit's first
            line (learner/choices.py; `tasklearner` fills it).
    """

    def __init__(self, model, train_loader, valid_loader, loss_func, *, optimizer="adamw", metrics=None,
                 callbacks: Sequence[Callback] = (), task=None, seed: int | None = None, backend=None,
                 progress: bool = True, model_config: dict | None = None, wd: float = 0.01, sync_bn: bool = False,
                 compiled=None, auto_compile=None, channels_last: bool = False, choices: dict | None = None):
        from .backend import make_backend
        from .callbacks.metrics import Metrics
        from .callbacks.nan_guard import NonFiniteGuard
        from .callbacks.progress import Progress
        from .callbacks.recorder import Recorder

        self.model = model
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.loss_func = loss_func
        self.optimizer = optimizer
        self.task = task
        self.seed = fresh_seed() if seed is None else int(seed)
        self.backend = backend or make_backend()
        self.model_config = model_config or {}
        self.wd = wd
        self.sync_bn = sync_bn  # across processes: BatchNorm statistics over the global batch
        self.compiled = compiled  # the compile cache's CompiledBackbone when the backbone was compiled (compiling.py)
        self.auto_compile = auto_compile
        self.channels_last = bool(channels_last)
        self.choices = dict(choices or {})
        self.recorder = Recorder()
        self.cbs: list[Callback] = []
        defaults = [self.recorder, Metrics(metrics, activation=None if task is None else task.activation), NonFiniteGuard()]
        if progress:
            defaults.append(Progress())
        for cb in [*defaults, *callbacks]:
            self.add_cb(cb)
        self.opt = None
        self.fit_state: FitState | None = None  # where the current (or last) fit stands; see fit_state.py
        # which run this learner's checkpoints belong to (a resume takes on the run it continues): a
        # new fit refuses a checkpoint_dir holding another run's (checkpoint/write.py); from the OS's
        # entropy, no global RNG drawn
        self.run_id = uuid.uuid4().hex
        # fit index -> what identifies that fit (checkpoint/identity.py), kept in every checkpoint so
        # that a resume skips a finished fit only if it is the one this learner ran
        self.fit_identities: dict[int, dict] = {}
        self._checkpointer = None  # set by fit (checkpoint_dir=)
        self.training = False
        self.epoch = 0
        self.n_epoch = 0
        self._setup_done = False
        self.dl = None  # the loader being read now (the set-up training or evaluation loader)
        self.events_on = True  # False while `run_eval(events=False)` runs: `event` then calls no callback

    # --- callbacks --------------------------------------------------------------------------
    def add_cb(self, cb: Callback) -> "Learner":
        """Add the callback `cb` (a class is instantiated) for every later fit and evaluation, in
        its place by ``order``; returns the learner, so calls chain."""
        if isinstance(cb, type):
            cb = cb()
        cb.learner = self
        self.cbs.append(cb)
        self.cbs.sort(key=lambda c: c.order)  # stable: ties keep insertion order
        return self

    def remove_cb(self, cb: Callback) -> "Learner":
        """Remove the callback object `cb` (a `ValueError` if the learner does not have it)."""
        self.cbs.remove(cb)
        return self

    @contextlib.contextmanager
    def added_cbs(self, cbs: Sequence[Callback]):
        """A context in which the callbacks `cbs` are added, removed on leaving it, errors
        included: how ``fit(callbacks=...)`` adds callbacks for one fit only."""
        for cb in cbs:
            self.add_cb(cb)
        try:
            yield
        finally:
            for cb in cbs:
                self.remove_cb(cb)

    def event(self, name: str) -> None:
        """Call the event `name` (``"after_loss"``, ...; callbacks/base.py lists them) on every
        callback in order; nothing while ``run_eval(events=False)`` runs (get_preds, predict, tta).
        A subclass's own step (`train_step`) calls it to keep the callbacks working."""
        if not self.events_on:  # an evaluation without a phase (get_preds, predict, tta): no callbacks
            return
        for cb in list(self.cbs):
            getattr(cb, name)()

    def cb(self, kind: type) -> Callback | None:
        """The first callback of type `kind`, or None."""
        return next((c for c in self.cbs if isinstance(c, kind)), None)

    @property
    def history(self) -> list[dict]:
        """One dict per epoch: epoch, train_loss, valid_loss, each metric, time."""
        return self.recorder.history

    @property
    def device(self):
        """The ``torch.device`` the loop runs on (this process's, across processes): the backend's."""
        return self.backend.device

    # fastai's names for where a fit stands: read-only views of `fit_state` (0 before any fit)
    n_iter = property(lambda self: self._fit_field("n_iter"), doc="Training batches per epoch.")
    train_iter = property(lambda self: self._fit_field("train_iter"), doc="Training batches done in this fit.")
    opt_step = property(lambda self: self._fit_field("opt_step"), doc="Optimizer steps done in this fit.")
    total_steps = property(lambda self: self._fit_field("total_steps"), doc="Optimizer steps in this fit in all.")
    fit_index = property(lambda self: self._fit_field("fit_index"), doc="Which fit of this learner (0, 1, ...).")
    fit_seed = property(lambda self: self._fit_field("fit_seed"), doc="The seed of this fit's shuffles.")

    def _fit_field(self, name: str) -> int:
        return 0 if self.fit_state is None else getattr(self.fit_state, name)

    # --- setup ------------------------------------------------------------------------------
    def setup(self) -> "Learner":
        """Put the model and the loaders on the backend (device, precision, processes), once.

        `fit` and `run_eval` call it; call it yourself before using ``learner.model`` directly on
        the learner's device. The loaders set up here (each process's shard across processes) are
        what the loop reads; ``learner.train_loader`` / ``valid_loader`` stay the plain ones."""
        if not self._setup_done:
            if self.sync_bn and self.backend.world_size > 1:
                if self.device.type != "cuda":  # torch's DDP refuses SyncBatchNorm on CPU
                    raise UsageError("sync_bn=True needs CUDA devices: torch's SyncBatchNorm runs on GPUs only "
                                     f"(this run is on {self.device.type}); leave sync_bn off on CPU")
                self.model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
            self.model = self.backend.setup_module(self.model)
            # a learner loaded for prediction has no loaders (Fabric cannot set up None)
            setup = lambda dl: None if dl is None else self.backend.setup_dataloader(dl)  # noqa: E731
            self._train_dl, self._valid_dl = setup(self.train_loader), setup(self.valid_loader)
            self._setup_done = True
        return self

    def make_optimizer(self, lr: float, wd: float | None):
        """One parameter group per layer group (backbone then head), so `lr` may be a (low, high) pair.

        Every parameter is in the optimizer, trainable or frozen: torch's optimizers skip a
        parameter whose gradient is None, so one optimizer serves `freeze` and `unfreeze` alike
        and keeps its state (Adam's moments) across them, as fastai's does."""
        from .optim import make_optimizer

        opt = make_optimizer(self.optimizer, self._param_groups(), lr=lr, wd=self.wd if wd is None else wd)
        return self.backend.setup_optimizer(opt)

    def _param_groups(self):
        from ..models.layer_groups import layer_groups

        return [list(g.parameters()) for g in layer_groups(self.task_model())]

    def _prepare_optimizer(self, lr, wd, reset_opt: bool):
        """Keep the optimizer (and its state) across fits, as fastai does; `reset_opt` rebuilds it."""
        if self.opt is None or reset_opt:
            self.opt = self.make_optimizer(as_tuple(lr)[-1], wd)
        else:
            for g in self.opt.param_groups:
                g["weight_decay"] = self.wd if wd is None else wd

    def set_hyper(self, lr, mom: float | None = None):
        """Set learning rate(s) and momentum / beta1 on every parameter group: the one place it
        happens (`train_step`, once per optimizer step; see optim.py's `set_hyper`)."""
        set_hyper(self.opt, lr, mom)

    # --- the loop ---------------------------------------------------------------------------
    def fit(self, n_epoch: int, lr=1e-3, *, wd: float | None = None, callbacks: Sequence[Callback] = (),
            schedule=None, reset_opt: bool = False, accumulate: int = 1, checkpoint_dir=None,
            checkpoint_every: int | None = None, resume=None, detect_anomaly: bool = False) -> "Learner":
        """Train `n_epoch` epochs at `lr` (constant unless `schedule(step, total) -> (lr, mom)` is given).

        The optimizer is kept from the previous fit (Adam's moments go on), unless `reset_opt`.
        `accumulate=k` takes one optimizer step every k batches (and at the end of an epoch), with
        the loss scaled so that k batches of b act as one batch of k*b; the schedule counts
        optimizer steps. `checkpoint_dir` writes a checkpoint at each epoch's end (and every
        `checkpoint_every` optimizer steps); `resume` continues from the last complete checkpoint
        in that folder (see learner/checkpoint/): a folder that does not exist is an error
        unless it is also `checkpoint_dir`, and a checkpoint of another task or model is refused.
        After a fit stopped by Ctrl-C or an error past its first checkpoint, the same call (the same
        length and schedule) with `resume` continues that fit, in a notebook as in a new process;
        any other call, or one without `resume`, is a new fit.
        A resume in the middle of an epoch reads that epoch's first batches again without training
        on them (the order and augmentations come from the seed, so they are the same batches).
        Across processes, a fit starts with one small collective that checks every process runs
        this same fit (batches, epochs, steps, seed, schedule, the checkpoint it resumes from): if
        not, every process raises a `UsageError` naming what differs (learner/fit_agreement.py).
        `detect_anomaly` checks every module's output and gradient on every batch and names the first
        that is not finite (debugging)."""
        n_epoch = check_int("n_epoch", n_epoch, minimum=1)
        if schedule is None:  # fit_one_cycle checked its own rates (lr_max) already
            check_lr("lr", lr)
        if wd is not None:
            check_number("wd", wd, minimum=0)
        if detect_anomaly:  # every module's output and gradient, every batch (callbacks/detect_anomaly.py)
            from .callbacks.detect_anomaly import DetectAnomaly

            callbacks = [*callbacks, DetectAnomaly()]
        accumulate = check_int("accumulate", accumulate, minimum=1)
        if checkpoint_every is not None:
            check_int("checkpoint_every", checkpoint_every, minimum=1)
        if self.train_loader is None:
            raise UsageError("this learner has no data to fit on: pass data to tasklearner / load_learner")
        self.setup()
        ckpt, unreadable = None, None
        if resume is not None:
            from .checkpoint import checkpoint_to_resume

            try:
                ckpt = checkpoint_to_resume(resume, checkpoint_dir)
            except Exception as e:  # noqa: BLE001 - raised below, once every process knows (fit_agreement.py)
                unreadable = e
        stopped = self.fit_state if self.fit_state is not None and not self.fit_state.ended else None
        index = 0 if self.fit_state is None else self.fit_state.fit_index + 1  # each fit gets its own seed
        fs = FitState(n_epoch=n_epoch, n_iter=len(self._train_dl), accumulate=accumulate,
                      fit_seed=derive_seed(self.seed, index), fit_index=index, schedule=schedule or constant_schedule(lr))
        if ckpt is not None and stopped is not None and ckpt.fit_index == stopped.fit_index \
                and self.opt is not None and stopped.same_fit(fs):
            # this learner's last fit was stopped (Ctrl-C, an error) after a checkpoint, and this call
            # is that fit again (its length and schedule): it continues it, with its index and seed,
            # as a new process running the same script would
            fs.fit_index, fs.fit_seed = stopped.fit_index, stopped.fit_seed
        if self.backend.world_size > 1:  # every process runs this fit, or all refuse it together (one collective)
            check_processes_agree(self.backend, fit_fingerprint(self, fs, ckpt, unreadable), cause=unreadable)
        if unreadable is not None:
            raise unreadable
        self.fit_state = fs
        from .checkpoint.identity import fit_identity

        self.fit_identities[fs.fit_index] = fit_identity(self, fs)
        self._decide_compile(fs)
        with seeded_torch_rng(fs.fit_seed, self.device), self.model_context(), self.added_cbs(callbacks):
            self._prepare_optimizer(lr, wd, reset_opt or self.opt is None)
            self.model.zero_grad(set_to_none=True)  # no stale gradients from a fit that stopped mid-batch
            # a callback that makes this fit a sweep (lr_find's): training phases only, and every
            # callback's before_fit already sees it (EMA does not average a sweep)
            fs.train_only = fs.train_only or any(getattr(cb, "sweep", False) for cb in self.cbs)
            if ckpt is not None and ckpt.fit_index > fs.fit_index:  # a later fit's: this one finished before
                # only if the checkpoint shows this very fit ran here, and then with the state at its end
                self.fit_state = fs = ckpt.restore_finished(self, fs)
                self.run_id = ckpt.run or self.run_id
                fs.ended = True
                return self
            self.n_epoch, first_epoch = fs.n_epoch, 0
            self._checkpointer = None
            if checkpoint_dir is not None:
                from .checkpoint import Checkpointer

                self._checkpointer = Checkpointer(self, checkpoint_dir, every=checkpoint_every,
                                                  run=None if ckpt is None else ckpt.run, resuming=resume is not None)
            if ckpt is not None and ckpt.fit_index == fs.fit_index:
                try:
                    self.fit_state = fs = ckpt.restore(self, fs)
                except BaseException:  # another fit's checkpoint: the folder is not this fit's to write
                    if self._checkpointer is not None:
                        self._checkpointer.close()
                    raise
                first_epoch = ckpt.next_epoch
                self.run_id = ckpt.run or self.run_id
            try:
                self.event("before_fit")
                for epoch in range(first_epoch, fs.n_epoch):
                    self.epoch = epoch
                    try:
                        self.event("before_epoch")
                        if ckpt is not None and epoch == first_epoch:
                            ckpt.restore_epoch(self)
                        self._train_epoch()
                        if fs.train_only:  # lr_find's sweep: no validation, no epoch end
                            continue
                        self._eval_loop(self._valid_dl, epoch=epoch, seed=fs.fit_seed, events=True)
                    except CancelEpoch:
                        pass
                    self.event("after_epoch")
                    if self._checkpointer is not None:
                        self._checkpointer.save(epoch_done=True)
            except CancelFit:
                pass
            finally:
                if self._checkpointer is not None:
                    self._checkpointer.close()  # its lock on the folder
                self._checkpointer = None
                self.event("after_fit")  # also on errors and KeyboardInterrupt: history is kept
        self.fit_state.ended = True  # not reached when an error or Ctrl-C ended it: `resume` continues it
        return self

    def _decide_compile(self, fs: FitState) -> None:
        """``compile="auto"``: now that the fit's length is known, compile or not (compiling.py),
        and say which in `choices`. Nothing to decide once compiled, or when compile was given."""
        if self.compiled is not None or self.auto_compile is None:
            return
        from .choices import Choice

        batches = fs.n_epoch * fs.n_iter
        do, why = self.auto_compile.decide(batches, self._train_dl.batch_size or 1)
        if do:
            from .compiling import compile_now

            self.compiled = compile_now(self.task_model())
        self.choices["compile"] = Choice("compiled" if do else "eager", f"compile='auto': {why}")

    def _batch_to_device(self, batch):
        """A loader's batch on the backend's device, the inputs in the learner's memory layout."""
        if torch.is_tensor(batch):  # inputs alone (a test loader)
            xb, yb = self.backend.to_device((batch,))[0], None
        else:
            xb, yb = self.backend.to_device(batch)
        if self.channels_last:
            from .memory_format import to_channels_last

            xb = to_channels_last(xb)
        return xb, yb

    def _train_epoch(self):
        """The training phase of one epoch: every batch through `train_step`, with its events."""
        fs = self.fit_state
        self.training, self.dl = True, self._train_dl
        self.model.train()
        set_epoch(self.dl, self.epoch, fs.fit_seed)
        skip, fs.skip_batches = fs.skip_batches, 0
        self.event("before_train")
        for self.iter, batch in enumerate(self.dl):
            if self.iter < skip:  # resumed mid-epoch: these batches were trained on before
                continue
            self.xb, self.yb = self._batch_to_device(batch)
            try:
                self.event("before_batch")
                self.train_step()
            except CancelBatch:
                pass
            self.event("after_batch")
            fs.train_iter += 1
            if self._checkpointer is not None:
                self._checkpointer.maybe_save()
        self.event("after_train")

    def train_step(self):
        """One batch: forward, loss, backward; the optimizer steps on the last batch of each
        accumulation group. The schedule is applied here, and only here, per optimizer step."""
        fs = self.fit_state
        first, last, size = fs.accumulation_group(self.iter)
        if first:
            lr, mom = fs.schedule(fs.opt_step, fs.total_steps)
            self.set_hyper(lr, mom)
        with self.backend.no_backward_sync(self.model, not last):  # across processes: no all-reduce yet
            with self.backend.autocast():
                self.pred = self.model(self.xb)
                self.event("after_pred")
                self.loss = self.compute_loss(self.pred, self.yb)
            self.event("after_loss")
            self.backend.backward(self.loss / size if size > 1 else self.loss)
        if not last:
            return
        self.event("after_backward")
        self.opt.step()
        fs.opt_step += 1
        self.event("after_step")
        self.opt.zero_grad(set_to_none=True)

    def valid_step(self):
        """One evaluation batch: ``self.pred`` from ``self.xb``, then, when the batch has targets
        (``self.yb`` is not None), ``self.loss``. Every evaluation runs it (`run_eval`: validate,
        get_preds, predict, tta, ...), so overriding it changes them all alike; outside a
        validation phase (``run_eval(events=False)``) its events reach no callback."""
        with self.backend.autocast():
            self.pred = self.model(self.xb)
            self.event("after_pred")
            if self.yb is not None:
                self.loss = self.compute_loss(self.pred, self.yb)
        self.event("after_loss")

    def compute_loss(self, pred, yb):
        """The loss of the model's output `pred` against the targets `yb`: ``loss_func(pred, yb)``.
        Training and every evaluation call it: override it for another objective (a
        regularization term, a loss that needs the inputs, ``self.xb``)."""
        return self.loss_func(pred, yb)

    # --- schedules --------------------------------------------------------------------------
    def fit_one_cycle(self, n_epoch: int, lr_max=None, *, div: float = 25.0, div_final: float = 1e5,
                      pct_start: float | None = None, wd: float | None = None, moms=(0.95, 0.85, 0.95),
                      callbacks: Sequence[Callback] = (), sizes=None, **kwargs) -> "Learner":
        """Warm up with a cosine to `lr_max` over the first `pct_start` of the steps, then anneal
        with a cosine; momentum the other way (torch's ``OneCycleLR``, step for step; see
        learner/schedule.py). Not given, `lr_max` is the task's `default_lr` (else 1e-3) and
        `pct_start` the task's `default_pct_start` (else fastai's 0.25); the fit's first line then
        says what the task chose. Discriminative rates:
        ``lr_max=slice(1e-5, 1e-3)`` (or a sequence, one rate per layer group) spreads the peak over
        the model's layer groups as fastai does (learner/optim.py's `group_lrs`), and each group
        follows its own cycle scaled to its peak. Progressive resizing: ``sizes=[(64, 64), (128, 128)]``
        splits the epochs in order across the sizes, in this one cycle (learner/resize.py). Other keyword arguments
        (`reset_opt`, `accumulate`, `checkpoint_dir`, `checkpoint_every`, `resume`) go to `fit`."""
        from .choices import Choice

        if "lr" in kwargs:  # fastai's name for this rate is lr_max too; fit's `lr` would be overridden
            raise UsageTypeError("fit_one_cycle takes its peak learning rate as lr_max (fit_one_cycle(n, lr_max=...)), "
                                 f"not lr (got lr={kwargs['lr']!r})")
        if lr_max is not None:
            check_lr("lr_max", lr_max)
        if pct_start is not None:
            check_number("pct_start", pct_start, minimum=0, maximum=1)
        check_number("div", div, minimum=1e-12)
        check_number("div_final", div_final, minimum=1e-12)
        task_lr, task_pct = (None, None) if self.task is None else (self.task.default_lr, self.task.default_pct_start)
        said = []  # what the task chose, for the fit's first line
        if lr_max is None:  # the task's suggestion (tasks/base.py `default_lr`), else 1e-3
            lr_max = task_lr or 1e-3
            if task_lr is not None:
                said.append((f"peak lr {lr_max:g}", "lr_max="))
        if pct_start is None:  # the task's suggestion (tasks/base.py `default_pct_start`), else fastai's
            pct_start = 0.25 if task_pct is None else task_pct
            if task_pct is not None:
                said.append((f"warm-up {pct_start:.0%} of the steps", "pct_start="))
        if said:
            self.choices["schedule"] = Choice(", ".join(v for v, _ in said), f"{type(self.task).__name__}'s "
                                              f"default{'s' if len(said) > 1 else ''}; "
                                              f"{' and '.join(a for _, a in said)} to change")

        def schedule(step, total):
            # each parameter group's own cycle, scaled to its rate (learner/optim.py's group_lrs)
            lrs = group_lrs(lr_max, len(self.opt.param_groups))
            pairs = [one_cycle_at(step, total, m, div, div_final, pct_start, moms) for m in lrs]
            return tuple(p[0] for p in pairs), pairs[0][1]

        # what identifies it in a checkpoint and across processes (fit_state.py `schedule_identity`)
        schedule = declared(schedule, kind="one_cycle", lr_max=lr_max, div=div, div_final=div_final,
                            pct_start=pct_start, moms=moms)

        if sizes is not None:
            from .resize import ProgressiveResize

            callbacks = [*callbacks, ProgressiveResize(sizes, n_epoch)]
        try:
            return self.fit(n_epoch, lr_max, wd=wd, callbacks=callbacks, schedule=schedule, **kwargs)
        finally:  # said for this fit only: a later `fit` with its own rate must not repeat it
            self.choices.pop("schedule", None)

    def freeze(self) -> "Learner":
        """Train only the last layer group (the head); BatchNorm layers stay trainable (fastai's
        train_bn). A model without a backbone/head split is split into its last child module and
        everything before it; a model with a single layer cannot be frozen (a clear error)."""
        from ..models.layer_groups import layer_groups, set_trainable

        groups = layer_groups(self.task_model(), need_split=True)
        for g in groups[:-1]:
            set_trainable(g, False)
        return self

    def unfreeze(self) -> "Learner":
        """Train every layer group again (after `freeze`); the optimizer and its state are kept."""
        from ..models.layer_groups import layer_groups, set_trainable

        for g in layer_groups(self.task_model()):
            set_trainable(g, True)
        return self

    def fine_tune(self, epochs: int, base_lr: float = 2e-3, freeze_epochs: int = 1, lr_mult: float = 100,
                  pct_start: float = 0.3, div: float = 5.0, **kwargs) -> "Learner":
        """fastai's recipe: train the head with the backbone frozen, then everything, with a lower
        learning rate for the backbone (`base_lr / 2 / lr_mult`) than for the head (`base_lr / 2`),
        spread over the layer groups as ``lr_max=slice(base_lr / 2 / lr_mult, base_lr / 2)``.
        One optimizer serves both phases, so Adam's moments carry over (as in fastai)."""
        check_number("base_lr", base_lr, minimum=0)
        check_int("freeze_epochs", freeze_epochs, minimum=0)
        self.freeze()
        if freeze_epochs > 0:
            self.fit_one_cycle(freeze_epochs, base_lr, pct_start=0.99, **kwargs)
        self.unfreeze()
        base_lr /= 2
        kwargs.pop("reset_opt", None)  # the second phase continues with the first phase's optimizer
        return self.fit_one_cycle(epochs, slice(base_lr / lr_mult, base_lr), pct_start=pct_start, div=div, **kwargs)

    def set_size(self, size) -> "Learner":
        """Progressive resizing: encode the images at `size` from the next batch on, keeping the
        model, optimizer and callbacks. ``fit_one_cycle(4, 1e-2); set_size((128, 128));
        fit_one_cycle(2, 1e-3)`` trains at the task's size, then at 128x128 (or, in one cycle,
        ``fit_one_cycle(6, 1e-2, sizes=[(64, 64), (128, 128)])``). A compiled model compiles once
        per size: warm each size you train at (learner/resize.py)."""
        from .resize import set_size

        return set_size(self, size)

    def lr_find(self, start_lr: float = 1e-7, end_lr: float = 10.0, num_it: int = 100, *, plot: bool = False):
        """Sweep the learning rate upward over a few batches through the learner's own
        `train_step` and callbacks; restore the model; suggest a rate (see learner/lr_find.py).
        With `Progress` (``progress=True``), the result's line (the suggestion, the sweep) is
        written where the epoch table goes, terminal or log; ``plot=True`` draws the curve."""
        from .callbacks.progress import Progress
        from .lr_find import lr_find

        result = lr_find(self, start_lr=start_lr, end_lr=end_lr, num_it=num_it)
        progress = self.cb(Progress)
        if progress is not None:
            progress.write_line(str(result))
        if plot:
            result.plot()
        return result

    # --- evaluation and prediction ---------------------------------------------------------
    def validate(self, loader=None) -> dict:
        """Run the validation phase alone, with its events: {"loss": ..., <metric>: ...}.

        `loader` (default: the validation set) is set up like the learner's own loaders (each
        process reads its shard, and the metrics are summed over processes). It may also be
        labelled raw data, a `Data` or an ``(inputs, targets)`` pair (a list is read as a tuple),
        such as a held-out split: ``learner.validate(data.split("test"))`` scores it through
        `labelled_loader`."""
        from .callbacks.metrics import Metrics

        if isinstance(loader, (tuple, list)):  # a Data (a tuple) or an (inputs, targets) pair, [inputs, targets] too
            loader = self.labelled_loader(tuple(loader) if isinstance(loader, list) else loader)
        self.setup()
        self.epoch = 0
        self.run_eval(None if loader is None else self.backend.setup_dataloader(loader), events=True)
        metrics = self.cb(Metrics)
        return {"loss": metrics.valid_loss, **metrics.values}

    def run_eval(self, loader=None, *, keep=None, transform=None, events: bool = False, epoch: int = 0):
        """The one evaluation path: the model in eval mode, without gradients, over `loader`
        (default: the validation set), batch by batch, in order. `validate`, `get_preds`,
        `predict` over items, `tta`, the interpretations and `show_results` all go through it.

        - ``keep(out, xb, yb) -> tuple of tensors``: what to keep of each batch (Keras's
          ``predict_step``); the kept tensors are moved to the CPU and concatenated in order, and
          that tuple is returned (None without `keep`). `out` is the model's output in float32;
          `yb` is None for a loader of inputs alone (`test_loader`).
        - ``transform(xb)``: a view of each input batch (test-time augmentation).
        - ``events=True``: the validation events for the callbacks (Metrics, Recorder, ...), as in a
          fit's validation phase.
        - `epoch`: the augmentation epoch (and shuffle) of `loader`, set from the learner's seed on
          the loader that is read, so two calls read the same batches.

        It runs in the learner's own forked RNG, seeded from `seed`: the caller's RNG is untouched."""
        self.setup()
        loader = self._valid_dl if loader is None else loader
        if loader is None:  # a learner loaded without data (load_learner(folder))
            raise UsageError("this learner has no validation data: pass it (learner.validate(data) takes a Data "
                             "or an (inputs, targets) pair), or load the learner with load_learner(folder, data=...)")
        with seeded_torch_rng(self.seed, self.device), self.model_context():
            return self._eval_loop(loader, keep=keep, transform=transform, events=events, epoch=epoch, seed=self.seed)

    def _eval_loop(self, loader, *, keep=None, transform=None, events=False, epoch=0, seed=0):
        """`run_eval` without the RNG and model context (a fit's validation phase is inside its own).

        Across processes each one reads its own shard, which may hold a batch more or less than
        another's, or none (learner/eval_forward.py): so while it runs, ``self.model`` is
        ``backend.eval_module(model)``, the model outside DDP's wrapper, and no collective happens
        inside the loop. A validation phase (`events`) first takes the first process's buffers
        (BatchNorm's statistics), on every process, as DDP's first forward pass after training did."""
        from .eval_forward import take_first_process_buffers

        self.training, self.dl = False, loader
        self.model.eval()
        set_epoch(loader, epoch, seed)
        kept = []
        outer, self.events_on = self.events_on, events and self.events_on
        wrapped, self.model = self.model, self.backend.eval_module(self.model)
        try:
            self.event("before_validate")
            if events:  # every process runs a validation phase; get_preds / predict may run on one alone
                take_first_process_buffers(self)
            with torch.no_grad():
                for self.iter, batch in enumerate(loader):
                    xb, yb = self._batch_to_device(batch)
                    if transform is not None:
                        xb = transform(xb)
                    self.xb, self.yb, self.pred = xb, yb, None
                    try:
                        self.event("before_batch")
                        self.valid_step()  # the one forward call of every evaluation
                    except CancelBatch:
                        pass
                    self.event("after_batch")
                    out = self.pred  # None when a callback cancelled the batch before the forward pass
                    if keep is not None and out is not None:
                        kept.append(tuple(t.cpu() for t in keep(out.float(), xb, yb)))
            self.event("after_validate")
        finally:
            self.events_on, self.model = outer, wrapped
        return None if keep is None else tuple(torch.cat(ts) for ts in zip(*kept))

    def activation(self, output):
        """The task's activation of model outputs (probabilities); the outputs as they are without a task."""
        return output if self.task is None else self.task.activation(output)

    def model_context(self):
        """The model's run context: a compiled backbone's (Inductor pointed at hotstart's cache), or a no-op."""
        return contextlib.nullcontext() if self.compiled is None else self.compiled.context()

    def task_model(self):
        """The user's model, without the wrappers put around it (Fabric's / DDP's ``.module``,
        ``torch.compile``'s ``._orig_mod``): the module whose state dict is saved, checkpointed and
        exported, and whose layer groups freeze and unfreeze."""
        m = getattr(self.model, "module", self.model)
        return getattr(m, "_orig_mod", m)

    def predict(self, raw_input) -> tuple[Any, torch.Tensor]:
        """Decoded prediction and probabilities for one raw input (e.g. a PIL image, or an image file's path)."""
        from .inference import predict

        return predict(self, raw_input)

    def get_preds(self, loader=None, *, items=None):
        """(probabilities, encoded targets) over the validation set, in order; with ``items=``
        (new raw inputs, unlabelled) ``(probabilities, None)``."""
        from .inference import get_preds, predict_items

        if items is not None:
            return predict_items(self, items), None
        return get_preds(self, loader)

    def test_loader(self, items, batch_size: int | None = None):
        """A loader over new raw inputs, encoded as in inference (fastai's ``test_dl``)."""
        from .inference import test_loader

        return test_loader(self, items, batch_size)

    def labelled_loader(self, data, batch_size: int | None = None):
        """A loader over labelled raw data (``data.split("test")``, an ``(inputs, targets)``
        pair), encoded as in validation, in order (fastai's ``test_dl(..., with_labels=True)``)."""
        from .inference import labelled_loader

        return labelled_loader(self, data, batch_size)

    def tta(self, n: int = 4, *, loader=None, beta: float = 0.25, verbose: bool = True):
        """Test-time augmentation: predictions averaged over `n` augmented views (see learner/tta.py)."""
        from .tta import tta

        return tta(self, n=n, loader=loader, beta=beta, verbose=verbose)

    # --- saving and showing ---------------------------------------------------------------
    def save(self, path) -> "Any":
        """Write ``weights.safetensors`` and ``task.json`` into the folder `path` (atomically)."""
        from pathlib import Path

        from .serialization import save_learner

        if not self.backend.is_global_zero:  # across processes the first one writes, the others wait
            self.backend.barrier()
            return Path(path)
        out = save_learner(self, path)
        self.backend.barrier()
        return out

    def export(self, path, format: str | None = None, *, quantize: str | None = None, calibrate: int = 256,
               **kwargs):
        """Export the model with its task: ONNX or .pte (``quantize="int8"`` optional) or .pt2; see hotstart/export/."""
        from ..export import export

        return export(self, path, format, quantize=quantize, calibrate=calibrate, **kwargs)

    def quantize(self, target: str = "pte", *, qat_epochs: int = 1, lr_max: float = 1e-4, calibrate: int = 256,
                 **kwargs):
        """int8 for `target` ("pte": ExecuTorch/XNNPACK, "onnx": QDQ for onnxruntime, "tflite":
        LiteRT / TF Lite Micro) by
        quantization-aware training for `qat_epochs` (0: post-training calibration); returns a
        QuantizedModel (``.validate()``, ``.export(path)``); this learner is unchanged. See
        hotstart/export/qat.py for why this is a step after training."""
        from ..export.qat import quantize_learner

        return quantize_learner(self, target, qat_epochs=qat_epochs, lr_max=lr_max, calibrate=calibrate, **kwargs)

    def summary(self, **kwargs) -> str:
        """Each layer's output shape and parameter count (computed on meta tensors), as a text that
        a notebook shows as it is (``print`` it in a script); see hotstart/show/summary.py."""
        from .views import summary

        return summary(self, **kwargs)

    def show_batch(self, n: int = 9, **kwargs):
        """Training samples, augmented as the model sees them, decoded for display (a Figure)."""
        from .views import show_batch

        return show_batch(self, n=n, **kwargs)

    def show_results(self, n: int = 9, **kwargs):
        """The first `n` validation samples with the model's prediction beside the truth: a
        Figure, or for a table task a table of the raw rows (hotstart/show/). Needs the task."""
        from .views import show_results

        return show_results(self, n=n, **kwargs)

    def plot_loss(self, **kwargs):
        """A Figure of the training loss of every batch, across fits, and the validation loss at
        each epoch's end (``ax=`` draws into an existing matplotlib axis)."""
        from .views import plot_loss

        return plot_loss(self, **kwargs)

    def __repr__(self):
        n = lambda loader: None if loader is None else len(loader.dataset)  # noqa: E731
        return (f"Learner(model={type(self.task_model()).__name__}, backend={self.backend!r}, "
                f"train={n(self.train_loader)}, valid={n(self.valid_loader)}, seed={self.seed})")


def fit_one_cycle(learner: Learner, n_epoch: int, lr_max=None, **kwargs) -> Learner:
    """Function form, as in FastAI.jl: ``fit_one_cycle(learner, 3, lr_max=3e-3)``."""
    return learner.fit_one_cycle(n_epoch, lr_max, **kwargs)
