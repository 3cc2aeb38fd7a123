"""The model for tables, in the spirit of fastai's ``TabularModel``, split as backbone + head.

`TabularBackbone` takes the encoded row (``[category indices..., normalized continuous...]``,
see encodings/tabular.py) and returns features:

- an embedding per categorical column (missing-value indicators included), of width
  `emb_sz_rule` (fastai's rule of thumb), then dropout `emb_drop`;
- the continuous columns through BatchNorm;
- an MLP over the concatenation: for each width in `layers` (default 200, 100, as fastai's
  ``tabular_learner``) ``Linear -> ReLU -> BatchNorm -> Dropout(p)``.

The task's head (a ``Linear`` to the classes or the regression outputs) completes it, as fastai's
last layer. Model kind ``"TabularModel"``. Keeping the two apart is what lets ``TaskModel``, ``freeze`` and `load_learner` treat
a table model like any other: the backbone's config is JSON, so no pickle is needed to rebuild it.
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn as nn

from ..errors import UsageError

DEFAULT_LAYERS = (200, 100)
DEFAULT_PS = 0.1
# Largest category index that a floating dtype holds exactly (inputs are cast under "-true" precisions).
_EXACT_INTEGERS = {torch.float16: 2048, torch.bfloat16: 256}


def emb_sz_rule(n_cat: int) -> int:
    """Embedding width for a column with `n_cat` categories (index 0 included): fastai's rule,
    ``min(600, round(1.6 * n_cat ** 0.56))``."""
    return int(min(600, round(1.6 * n_cat ** 0.56)))


class TabularBackbone(nn.Module):
    """The features of an encoded table row: an embedding per categorical column, the continuous
    columns through BatchNorm, and an MLP over both (the module docstring has the layout). Model
    kind ``"TabularModel"``; the task's head (a Linear) completes it.

    The input is the encoded row ``[category indices..., normalized continuous values...]``
    (encodings/tabular.py); the output has ``num_features`` (the last width of `layers`) values.
    ``config`` is its JSON config, from which `from_config` rebuilds it, so a saved table model
    loads without unpickling.

    Args:
        cardinalities: the number of categories of each categorical column, index 0 included
            (``"#na#"``: a missing or never-seen category).
        n_cont: how many continuous columns follow the categorical ones.
        layers: the MLP's widths, each ``Linear -> ReLU -> BatchNorm -> Dropout``; (200, 100)
            is fastai's ``tabular_learner`` default.
        ps: the dropout after each MLP layer: one value for all, or one per layer; each in [0, 1).
        emb_drop: the dropout on the concatenated embeddings, in [0, 1).
        emb_szs: the width of each column's embedding. None: fastai's rule (`emb_sz_rule`):
            6 for 10 categories, 21 for 100, 77 for 1,000, at most 600.
    """

    def __init__(self, cardinalities: Sequence[int], n_cont: int, layers: Sequence[int] = DEFAULT_LAYERS,
                 ps: float | Sequence[float] = DEFAULT_PS, emb_drop: float = 0.0,
                 emb_szs: Sequence[int] | None = None):
        super().__init__()
        self.cardinalities = [int(c) for c in cardinalities]
        self.n_cont = int(n_cont)
        layers = [int(w) for w in layers]
        if not layers or min(layers) < 1:
            raise UsageError(f"layers= must be one or more positive widths, got {layers!r}")
        ps = [float(ps)] * len(layers) if isinstance(ps, (int, float)) else [float(p) for p in ps]
        if len(ps) != len(layers):
            raise UsageError(f"ps= needs one dropout per layer ({len(layers)}), got {ps!r}")
        for name, p in [("emb_drop", emb_drop), *(("ps", p) for p in ps)]:
            if not 0.0 <= p < 1.0:
                raise UsageError(f"{name}= must be in [0, 1), got {p!r}")
        emb_szs = [emb_sz_rule(c) for c in self.cardinalities] if emb_szs is None else [int(s) for s in emb_szs]
        if len(emb_szs) != len(self.cardinalities):
            raise UsageError(f"emb_szs= needs one width per categorical column ({len(self.cardinalities)}), got {emb_szs}")
        self.embeds = nn.ModuleList(nn.Embedding(c, s) for c, s in zip(self.cardinalities, emb_szs))
        for e in self.embeds:  # as fastai's Embedding: small weights, so embeddings start near zero
            nn.init.trunc_normal_(e.weight, std=0.01, a=-0.02, b=0.02)
        self.emb_drop = nn.Dropout(emb_drop)
        self.bn_cont = nn.BatchNorm1d(self.n_cont) if self.n_cont else None
        mlp, n_in = [], sum(emb_szs) + self.n_cont
        for width, p in zip(layers, ps):
            mlp += [nn.Linear(n_in, width, bias=False), nn.ReLU(inplace=True), nn.BatchNorm1d(width)]
            if p > 0:
                mlp.append(nn.Dropout(p))
            n_in = width
        self.mlp = nn.Sequential(*mlp)
        self.num_features = layers[-1]
        self.config = {"kind": "TabularModel", "cardinalities": self.cardinalities, "n_cont": self.n_cont,
                       "layers": layers, "ps": ps, "emb_drop": float(emb_drop), "emb_szs": emb_szs}

    def forward(self, x):
        n_cat = len(self.cardinalities)
        limit = _EXACT_INTEGERS.get(x.dtype)
        if limit is not None and n_cat and max(self.cardinalities) > limit:
            raise UsageError(f"a vocabulary of {max(self.cardinalities)} categories does not fit in {x.dtype} inputs "
                             f"(indices are exact only up to {limit}); use a '-mixed' precision instead")
        parts = []
        if n_cat:
            idx = x[:, :n_cat].long()
            parts.append(self.emb_drop(torch.cat([e(idx[:, i]) for i, e in enumerate(self.embeds)], 1)))
        if self.n_cont:
            parts.append(self.bn_cont(x[:, n_cat:]))
        return self.mlp(torch.cat(parts, 1) if len(parts) > 1 else parts[0])

    @classmethod
    def from_config(cls, cfg: dict) -> "TabularBackbone":
        """The backbone that ``config`` describes (its weights come from the saved state dict)."""
        return cls(cfg["cardinalities"], cfg["n_cont"], layers=cfg["layers"], ps=cfg["ps"],
                   emb_drop=cfg["emb_drop"], emb_szs=cfg["emb_szs"])


def build_model(task, *, backbone=None, pretrained: bool = False, layers=None, ps=None, emb_drop=None):
    """The model for a set-up table task (its encoded row, a `TableTensor`) and its JSON config."""
    from .builder import with_head

    if backbone is not None:
        raise UsageError(f"{type(task).__name__} has no backbone: its model is embeddings + an MLP; "
                         "choose its size with layers=(200, 100), ps= and emb_drop=")
    encoded_input = task.encoded_blocks()[0]
    if not getattr(encoded_input, "known", False):
        raise UsageError("the tabular task has no statistics yet, so its model cannot be built: call "
                         "task.setup(training_data) first, or pass data to tasklearner (it sets up on the training split)")
    net = TabularBackbone(encoded_input.cardinalities, encoded_input.n_cont,
                          layers=DEFAULT_LAYERS if layers is None else layers,
                          ps=DEFAULT_PS if ps is None else ps, emb_drop=0.0 if emb_drop is None else emb_drop)
    return with_head(task, net, dict(net.config))


def model_from_config(config: dict, task):
    """The model that `config` (``task.json``'s ``"model"``) describes for `task`, checked against the
    task's statistics first (`check_backbone_fits`)."""
    from .builder import rebuild_with_head

    net = TabularBackbone.from_config(config["backbone"])
    check_backbone_fits(net, task)
    return rebuild_with_head(task, config, net)


def check_backbone_fits(net: TabularBackbone, task) -> None:
    """Raise `ModelTaskMismatch` unless `net` takes the rows `task` encodes: one embedding per
    categorical input (columns, then missing-value indicators) with as many rows as that input has
    categories, and as many continuous values.

    Why: the model's config and the task's statistics are saved side by side in ``task.json``, and
    an edit of one (a category added to a vocabulary, a missing-value indicator dropped) loads
    fine but fails at the first prediction with torch's "index out of range in self", which names
    neither the file nor the column. Checked when the model is rebuilt, it names both."""
    from ..tasks.checks import ModelTaskMismatch

    encoded = task.encoded_blocks()[0]
    cards = getattr(encoded, "cardinalities", None)
    if cards is None or getattr(encoded, "n_cont", None) is None:
        raise ModelTaskMismatch(f"a TabularModel takes the encoded rows of a set-up table task; {type(task).__name__} "
                                f"encodes {type(encoded).__name__}")
    from ..tasks.tabular import TabularClassificationSingle, TabularRegression

    named = isinstance(task, (TabularClassificationSingle, TabularRegression))  # its preprocessing names the inputs
    prep = task.preprocessing if named else None
    names = ([f"column {c!r}" for c in prep.categorical] + [f"the missing-value indicator of {c!r}"
                                                             for c in prep.na_columns] if named
             else [f"categorical input {i}" for i in range(len(cards))])
    if len(cards) != len(net.cardinalities):
        detail = (f": columns {prep.categorical} and missing-value indicators for na_columns {prep.na_columns}"
                  if named else "")
        raise ModelTaskMismatch(f"the model embeds {len(net.cardinalities)} categorical input(s), the preprocessing "
                                f"encodes {len(cards)}{detail}")
    for name, theirs, ours in zip(names, cards, net.cardinalities):
        if theirs != ours:
            raise ModelTaskMismatch(f"{name} has {theirs} categories in the preprocessing (#na# included), but the "
                                    f"model's embedding for it takes {ours}")
    if encoded.n_cont != net.n_cont:
        raise ModelTaskMismatch(f"the model takes {net.n_cont} continuous value(s), the preprocessing gives "
                                f"{encoded.n_cont}")
