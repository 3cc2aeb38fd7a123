"""`SupervisedTask`: blocks + encodings, and everything that follows from them statically.

A task knows what a sample is (``blocks = (input_block, target_block)``), how it becomes tensors
(``encodings``, applied in order), and so the encoded blocks, the model head, the loss and the
metrics. It never runs a training loop (that is the learner's job).
"""
from __future__ import annotations

import io
from typing import Any, ClassVar, Sequence

import numpy as np

from ..blocks import Block, BlockValueError
from ..encodings import Context, Encoding
from ..errors import SampleError, UsageTypeError
from ..kinds import Kinded
from ..strict_json import json_form
from .config import build, check_declared, manages_own_json


class SupervisedTask(Kinded, family="task"):
    """The base of every task: what a sample is (two blocks, input and target), how it becomes
    tensors (encodings, applied in order), and what follows from that: the model's head, the
    loss, the metrics and the decoding of outputs. It never trains (the `Learner` does).

    The tasks of hotstart (`ImageClassificationSingle`, `TabularRegression`, ...) build their own
    blocks and encodings; a new task subclasses this one and provides `head`, `loss_fn`,
    `metrics`, `activation` and `decode_output`, then overrides the hooks whose default does not
    fit (``model_kind``, ``default_lr``, `default_batch_size`, ...: the learner and `tasklearner`
    ask the task, never what kind of task it is). A subclass is registered under its name as it
    is defined, so a saved model's ``task.json`` finds it again (hotstart/kinds.py); equal
    blocks and encodings make equal tasks.

    ``task.describe()`` prints each block through each encoding with a mock sample's shapes, the
    quickest check that a task encodes what you meant.

    A subclass with constructor arguments of its own declares them in `get_config`, as in Keras,
    so that they are saved in ``task.json``, count in ``==``, and survive every rebuild of the task
    (``setup`` on the training split, ``set_size``, ``with_stats``, loading)::

        class FocalImages(ImageClassificationSingle):
            def __init__(self, blocks, gamma=2.0, **kwargs):
                super().__init__(blocks, **kwargs)
                self.gamma = gamma

            def get_config(self):
                return {**super().get_config(), "gamma": self.gamma}

            def loss_fn(self):
                return FocalLoss(self.gamma)

    A constructor parameter the subclass adds but `get_config` does not return is a `UsageTypeError`
    as soon as the task's JSON is needed (``tasklearner``'s check, a rebuild, a save), never a
    silent return to its default (tasks/config.py).

    Args:
        blocks: ``(input_block, target_block)``: exactly two `Block` objects (anything else is a
            `UsageTypeError`).
        encodings: the `Encoding` objects, applied in this order to both blocks' values.
    """

    # The name in JSON, the registry of tasks, equality and hashing: `Kinded` (hotstart/kinds.py).
    # A task's JSON holds its blocks and encodings (`to_dict`, `_from_params`).

    def __init__(self, blocks: Sequence[Block], encodings: Sequence[Encoding]):
        blocks = tuple(blocks)
        if len(blocks) != 2 or not all(isinstance(b, Block) for b in blocks):
            raise UsageTypeError(f"a supervised task needs blocks=(input_block, target_block), got {blocks!r}")
        self.blocks = blocks
        self.encodings = tuple(encodings)
        for part in (*self.blocks, *self.encodings):  # a parameter JSON cannot hold: refused now, not at save
            if isinstance(part, Kinded):
                part.json_dict()

    # --- static derivation ------------------------------------------------------------
    def encoded_blocks(self, blocks: Sequence[Block] | None = None) -> tuple[Block, ...]:
        """The blocks after every encoding: what the model sees and what the loss compares."""
        blocks = list(self.blocks if blocks is None else blocks)
        for enc in self.encodings:
            blocks = [enc.encoded_block(b) or b for b in blocks]
        return tuple(blocks)

    @property
    def input_block(self) -> Block:
        """The block of the sample's input (``blocks[0]``): an `Image`, a `TableRow`, a series, ..."""
        return self.blocks[0]

    @property
    def target_block(self) -> Block:
        """The block of the sample's target (``blocks[1]``): a `Label`, a mask, keypoints, ..."""
        return self.blocks[1]

    # --- encoding and decoding ------------------------------------------------------
    def encode_sample(self, sample: Sequence[Any], context: Context | str = Context.TRAINING,
                      rng: np.random.Generator | None = None, *, where: str | None = None) -> tuple:
        """Raw ``(input, target)`` -> encoded tensors. `where` names the sample in errors."""
        context = Context.of(context)
        values = list(sample)
        if len(values) != len(self.blocks):
            raise SampleError(f"{where or 'sample'}: expected {len(self.blocks)} values (input, target), got {len(values)}")
        try:
            for b, v in zip(self.blocks, values):
                b.validate(v)
            for enc, blocks in self._stages():
                values = enc.encode_sample(blocks, values, context, rng)
        except BlockValueError as e:  # the data does not fit its block
            if where:
                raise BlockValueError(f"{where}: {e}") from e
            raise
        except ValueError as e:  # an encoding refused the value: say which sample, keep the cause
            if where:
                raise SampleError(f"{where}: {e}") from e
            raise
        except TypeError as e:  # likely a bug: keep its type and traceback, add which sample
            if where:
                e.add_note(f"while encoding {where}")
            raise
        return tuple(values)

    def encode_batch(self, samples: Sequence[Sequence[Any]], context: Context | str = Context.TRAINING,
                     rngs: Sequence[np.random.Generator | None] | None = None) -> list[tuple]:
        """Raw ``(input, target)`` samples -> encoded tensors, each as `encode_sample` encodes it
        with its own rng of `rngs`, with the encodings that can work on the whole batch at once
        doing so (`Encoding.encode_batch`: the training augmentation of classification images).
        Errors do not name the sample: the loader encodes a batch that fails again one sample at
        a time (`encode_sample` with ``where=``), which names it."""
        context = Context.of(context)
        rngs = [None] * len(samples) if rngs is None else list(rngs)
        values = [list(s) for s in samples]
        for v in values:
            if len(v) != len(self.blocks):
                raise SampleError(f"sample: expected {len(self.blocks)} values (input, target), got {len(v)}")
            for b, x in zip(self.blocks, v):
                b.validate(x)
        for enc, blocks in self._stages():
            values = enc.encode_batch(blocks, values, context, rngs)
        return [tuple(v) for v in values]

    def encode_input(self, x: Any, context: Context | str = Context.INFERENCE,
                     rng: np.random.Generator | None = None) -> Any:
        """Encode an input alone (prediction): the same path, without a target."""
        context = Context.of(context)
        values = [x]
        self.blocks[0].validate(x, where="input")
        for enc, blocks in self._stages():
            values = enc.encode_sample(blocks[:1], values, context, rng)
        return values[0]

    def _stages(self) -> list:
        """[(encoding, the blocks it receives)], derived once: encoding a sample is hot code."""
        stages = self.__dict__.get("_stages_cache")
        if stages is None:
            stages, blocks = [], list(self.blocks)
            for enc in self.encodings:
                stages.append((enc, blocks))
                blocks = [enc.encoded_block(b) or b for b in blocks]
            self.__dict__["_stages_cache"] = stages
        return stages

    def decode_target(self, y: Any) -> Any:
        """An encoded target back to the raw target (e.g. class index -> label)."""
        return self._decode(1, y)

    def decode_input(self, x: Any) -> Any:
        """An encoded input back to something showable (e.g. tensor -> PIL image)."""
        return self._decode(0, x)

    def _decode(self, i: int, value: Any) -> Any:
        chain = []
        block = self.blocks[i]
        for enc in self.encodings:
            new = enc.encoded_block(block)
            if new is not None:
                chain.append((enc, new))
                block = new
        for enc, encoded in reversed(chain):
            value = enc.decode(encoded, value, Context.INFERENCE)
        return value

    def mock_sample(self, rng: np.random.Generator) -> tuple:
        """A valid random raw sample, drawn only from `rng`."""
        return tuple(b.mock(rng) for b in self.blocks)

    # --- what the learner needs (subclasses provide) ---------------------------------------
    def head(self, num_features: int):
        """The module from a backbone's `num_features` features to the task's outputs (a Linear
        to the classes, ...); `tasklearner` puts it after the backbone in a `TaskModel`."""
        raise NotImplementedError

    def loss_fn(self):
        """The loss, ``loss(model_output, encoded_target) -> scalar``, the learner trains with."""
        raise NotImplementedError

    def metrics(self) -> dict:
        """Name -> metric object (torchmetrics' protocol), new ones at each call: the learner's
        default metrics, a column each in the history. An empty dict by default: the loss only."""
        return {}

    def decode_output(self, output) -> tuple[Any, Any]:
        """One sample's model output -> (decoded prediction, probabilities or values): what
        `predict` returns (a label and the class probabilities, ...)."""
        raise NotImplementedError

    # --- hooks the learner calls on every task: override what differs from the default --------
    # The learner and `tasklearner` never ask what kind of task or block they have (no hasattr,
    # no isinstance on blocks): they call these, and a task says what it needs by overriding one.

    model_kind: ClassVar[str | None] = None
    """Which model `tasklearner` builds when it is given none: None for a backbone with this
    task's `head`; a model kind's name (hotstart/models/registry.py), e.g. "unet" for an
    encoder-decoder with one output map per class (segmentation)."""

    default_backbone: ClassVar[str | None] = None
    """The backbone `tasklearner` uses when given neither `backbone` nor `model`: None for the
    model kind's own default (the small CNN for images); the series tasks: "inceptiontime"."""

    targets_on_input_grid: ClassVar[bool] = False
    """Whether the target lives on the input image's pixel grid (a mask, keypoints), so that the
    image cannot be resized alone ahead of the joint transform: a decoded image is then kept at
    its own size (datasets/decoded_cache.py), and ``cache="resized"`` is refused."""

    bf16_by_default: ClassVar[bool] = False
    """Whether `tasklearner` trains in bf16 mixed precision when no precision is given and the
    hardware has bf16 units (learner/precision.py). True only where bf16 was measured to keep the
    accuracy (image classification); the others train in fp32 unless asked."""

    @property
    def classes(self) -> list | None:
        """The class names when the task predicts classes (a label, or one per pixel), else None
        (regression, keypoints). The CLI's hints and views read it."""
        return None

    def output_shape(self) -> tuple[int, ...] | None:
        """What the model must output per sample, when the task says (a mask's (C, H, W), 2n
        keypoint coordinates); None: one logit per class of the encoded target (tasks/checks.py)."""
        return None

    default_lr: ClassVar[float | None] = None
    """The peak learning rate `fit_one_cycle` uses when given none: None for the learner's own
    1e-3; a task whose models were measured to want another says so (the series tasks, single-label
    image classification)."""

    default_pct_start: ClassVar[float | None] = None
    """The share of `fit_one_cycle`'s steps that warm up to the peak when `pct_start` is not given:
    None for fastai's 0.25; a task measured to learn sooner with another says so (single-label
    image classification)."""

    default_ema: ClassVar[float | None] = None
    """The decay of the average of the weights (the `EMA` callback, with timm's warm-up of the
    decay) that `tasklearner` adds when `ema` is not given: validation and the fitted model then use
    the average. None: no average; a task measured to reach its accuracy sooner with one says so
    (single-label image classification)."""

    def default_batch_size(self, n_train: int) -> int | None:
        """The batch size `tasklearner` uses when given none, from the number of training samples
        `n_train`: None for the learner's own 64. A task of small data sets overrides it (the
        series tasks: an archive's training split of 36 series in batches of 64 is one step per
        epoch, too few to learn in a short fit)."""
        return None

    @property
    def needs_setup(self) -> bool:
        """True while the task still has to learn something from the training split before a
        model is built (a table's column statistics); `tasklearner` then calls `setup`."""
        return False

    def setup(self, data) -> "SupervisedTask":
        """The task with what it learns from the training split `data` (``(inputs, targets)``)."""
        return self

    def with_stats(self, mean, std) -> "SupervisedTask":
        """The task normalizing its input with a pretrained backbone's `mean` / `std`; a task
        whose input is not normalized that way (a table) ignores them."""
        return self

    def activation(self, output):
        """Model outputs (logits) -> probabilities; used by metrics and prediction."""
        return output

    def load_input(self, raw_input):
        """A raw input as the user gives it to `predict`, as `encode_input` takes it. The default
        takes it as it is; an image task also reads an image file's path."""
        return raw_input

    def decode_prediction(self, output, raw_input):
        """`predict`'s answer for one output: `decode_output`, unless the prediction must be put
        back on the raw input's grid (a mask or keypoints at the given image's size)."""
        return self.decode_output(output)

    def tta_views(self, n: int) -> list | None:
        """Test-time augmentation: None (the default) for `n` views encoded again with the
        task's own training augmentation, for a prediction that does not move with the input (a
        label); else `n` pairs ``(transform the encoded batch, undo on the output)``, for a
        prediction on the image grid (a shifted view, and its output shifted back)."""
        return None

    def check(self, model) -> dict:
        """Does `model` fit this task? Checked on meta tensors (no data, no activation memory); raises
        an error that says what to change. See hotstart/tasks/checks.py. The task's JSON is checked
        first (`to_dict`): a constructor parameter missing from `get_config`, or one JSON cannot hold,
        is refused before training rather than lost or refused at ``learner.save``."""
        from .checks import check_model

        self.to_dict()
        return check_model(self, model)

    # --- configuration and JSON -------------------------------------------------------------
    def get_config(self) -> dict:
        """The constructor's arguments besides `blocks`, as JSON values (Keras' ``get_config``): what
        ``task.json`` holds beside the kind and the blocks, what ``==`` compares, and what every
        rebuild of the task (`with_config`: ``setup``, ``set_size``, ``with_stats``) passes to the
        constructor again. Here the encodings; hotstart's tasks return their own arguments (an image
        task's size, augmentation and normalization stats; a table task's preprocessing).

        A subclass that adds constructor parameters returns them too, JSON-compatible (str, int,
        float, bool, None, lists and dicts of them; a tuple is read back as a list), under the
        parameters' names: ``return {**super().get_config(), "gamma": self.gamma}``. `from_config`
        then passes them back as keywords. A parameter the subclass's ``__init__`` adds and this
        does not return is refused (tasks/config.py)."""
        return {"encodings": [e.to_dict() for e in self.encodings]}

    @classmethod
    def from_config(cls, blocks: Sequence[Block], config: dict) -> "SupervisedTask":
        """The task of `blocks` with a `get_config` result (as JSON reads it back): the constructor
        called with the configuration's keys as keywords, after hotstart's own arguments that JSON
        describes (the encodings here) are turned back into objects. Override it, as in Keras, only
        when your constructor does not take `get_config`'s keys as they are."""
        config = dict(config)
        encodings = [Encoding.from_dict(e) for e in config.pop("encodings")]
        return build(cls, [blocks, encodings], config)

    def with_config(self, **changes) -> "SupervisedTask":
        """A task of this class with this one's blocks and configuration, `changes` (JSON values, as
        `get_config` gives them) replacing some of it: ``task.with_config(size=[64, 64])``. Every
        rebuild of a task goes through it, so a subclass's own parameters are kept: those its
        `get_config` declares, or those its own ``to_dict`` / ``_from_params`` carry (the older way)."""
        d = self.to_dict()
        d.pop("kind")
        return type(self)._from_params(json_form({**d, **changes}, "", self.json_owner()))

    def to_dict(self) -> dict:
        """The task as JSON: its kind, blocks and configuration (`get_config`), the ``task.json`` of a
        saved model; ``SupervisedTask.from_dict`` reads it back without unpickling. Refused
        (tasks/config.py) where `get_config` misses a constructor parameter the class adds: the
        JSON would lose it."""
        config = self.get_config()
        check_declared(type(self), config)
        return self._json(config)

    def json_dict(self) -> dict:
        """What ``==``, the hash and a checkpoint's task check compare: the JSON, as `to_dict` writes
        it but not refused for an undeclared parameter (comparing two tasks must not raise). A class
        that writes its own JSON (``to_dict``) is compared by it."""
        if manages_own_json(type(self)):
            return json_form(self.to_dict(), "", self.json_owner())
        return self._json(self.get_config())

    def _json(self, config: dict) -> dict:
        return json_form({"kind": self.kind, "blocks": [b.to_dict() for b in self.blocks], **config}, "",
                         self.json_owner())

    @classmethod
    def _from_params(cls, d: dict) -> "SupervisedTask":
        d = dict(d)
        blocks = [Block.from_dict(b) for b in d.pop("blocks")]
        return cls.from_config(blocks, d)

    def __repr__(self):
        return f"{type(self).__name__}(blocks={self.blocks!r})"

    # --- description --------------------------------------------------------------------
    def describe(self, *, file=None) -> str:
        """Print (and return) each block through each encoding, with a mock sample's tensor shapes."""
        out = io.StringIO()
        names = ["input", "target"]
        print(f"{type(self).__name__}", file=out)
        for i, name in enumerate(names):
            block = self.blocks[i]
            print(f"  {name}: {block!r}", file=out)
            for enc in self.encodings:
                new = enc.encoded_block(block)
                if new is not None:
                    print(f"    -> {type(enc).__name__}: {new!r}", file=out)
                    block = new
        rng = np.random.default_rng(0)
        sample = self.mock_sample(rng)
        for ctx in (Context.TRAINING, Context.VALIDATION):
            enc = self.encode_sample(sample, ctx, np.random.default_rng(0))
            shapes = ", ".join(f"{n} {_describe_value(v)}" for n, v in zip(names, enc))
            print(f"  encoded ({ctx.value}): {shapes}", file=out)
        text = out.getvalue()
        print(text, end="", file=file)
        return text


SupervisedTask._kinds.register(SupervisedTask)  # the base class is a task of its own ("SupervisedTask")


def check_task(task) -> None:
    """Refuse a `task` argument that is not a task object, saying what to pass: a task's name or
    its class (not called with the blocks) would otherwise fail later, far from the call."""
    if isinstance(task, SupervisedTask):
        return
    if isinstance(task, type) and issubclass(task, SupervisedTask):
        raise UsageTypeError(f"task must be a task object, got the class {task.__name__}: build one from the "
                             f"blocks, e.g. {task.__name__}(blocks)")
    raise UsageTypeError(f"task must be a task object such as ImageClassificationSingle(blocks), got {task!r} "
                         f"({type(task).__name__})")


def _describe_value(v) -> str:
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"{tuple(v.shape)} {str(v.dtype).replace('torch.', '')}"
    return repr(v)
