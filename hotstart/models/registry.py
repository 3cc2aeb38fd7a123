"""The registry of model kinds: one explicit table, as timm's ``_registry.py`` but without import side effects.

A *model kind* is what ``task.json`` calls ``"kind"``: how a model is built for a task and how it
is rebuilt from its saved config. Each kind lives in one module of this package that defines two
functions (see hotstart/models/__init__.py for the contract and how to add one):

    build_model(task, *, backbone, pretrained, **options) -> (nn.Module, config: dict)
    model_from_config(config: dict, task) -> nn.Module

The table below is the whole registry. It is a plain constant, written by hand, so which kinds
exist does not depend on what else was imported (DESIGN.md, "Not to copy": no decorator editing
a global that cannot be reset), and reading it imports nothing heavy: a kind's module, and torch
or timm with it, loads only when a model of that kind is built. A user's own kind, or a test's,
is a model passed as ``model=`` (or a backbone module, kind "module").
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from ..errors import UsageError


@dataclass(frozen=True)
class ModelKind:
    """One registered kind of model."""

    name: str  # the "kind" saved in task.json (its backbone's, for a backbone + head model): never rename
    module: str  # the module that defines build_model and model_from_config; imported on first use
    summary: str  # one line: what the kind builds (for list_model_kinds, errors and docs)
    options: tuple[str, ...] = ()  # keyword options its build_model takes beyond task, backbone, pretrained
    by_name: bool = False  # True: backbone="<name>" selects it (a name timm does not use); False: the task or
    #                        the backbone's type selects it (model_kind, None, an nn.Module, a timm name)

    def builder(self) -> Callable:
        return getattr(importlib.import_module(self.module), "build_model")

    def rebuilder(self) -> Callable:
        return getattr(importlib.import_module(self.module), "model_from_config")


_KINDS = (
    ModelKind("SmallCNN", "hotstart.models.small_cnn",
              "the default backbone: a small conv net for small images (8x8 to 128x128), plus the task's head",
              by_name=True),
    ModelKind("smallcnn_micro", "hotstart.models.small_cnn_micro",
              "SmallCNN with widths 8-16-32 (~20 k parameters): for microcontrollers (export format 'c')",
              by_name=True),
    ModelKind("smallcnn_maxpool", "hotstart.models.small_cnn_maxpool",
              "SmallCNN halving by max pooling, widths 16-32-64-128: small folders trained from random weights",
              by_name=True),
    ModelKind("timm", "hotstart.models.timm_backbone",
              "any timm model name (backbone='resnet18'), features pooled, plus the task's head"),
    ModelKind("module", "hotstart.models.user_module",
              "your nn.Module as the backbone (backbone=net), plus the task's head; load_learner needs model="),
    ModelKind("TabularModel", "hotstart.models.tabular",
              "tables: an embedding per categorical column and an MLP (fastai's TabularModel), plus the task's head",
              options=("layers", "ps", "emb_drop")),
    ModelKind("unet", "hotstart.models.unet",
              "dense outputs (segmentation): an encoder's stages decoded back to the input's size"),
    ModelKind("inceptiontime", "hotstart.models.inception_time",
              "series: InceptionTime (Ismail Fawaz et al. 2020), the series tasks' default, plus the task's head",
              by_name=True),
    ModelKind("resnet1d", "hotstart.models.resnet1d",
              "series: the 1-D ResNet of Wang et al. (2017), plus the task's head", by_name=True),
)

MODEL_KINDS: Mapping[str, ModelKind] = MappingProxyType({k.name: k for k in _KINDS})
"""Name -> `ModelKind`, read-only: every kind of model hotstart builds and rebuilds from its saved
config (``"SmallCNN"``, ``"timm"``, ``"TabularModel"``, ``"unet"``, ``"inceptiontime"``, ...)."""


def list_model_kinds() -> list[str]:
    """The names of the registered model kinds."""
    return sorted(MODEL_KINDS)


def is_model_kind(name) -> bool:
    """Whether `name` is a string naming a registered kind (a key of `MODEL_KINDS`: ``"SmallCNN"``,
    ``"timm"``, ``"unet"``, ...). Anything else, a module or None included, is False, never an
    error: it is the question to ask before `get_model_kind`, which raises."""
    return isinstance(name, str) and name in MODEL_KINDS


def get_model_kind(name: str) -> ModelKind:
    """The kind called `name`; `UsageError` naming the known kinds otherwise."""
    if not is_model_kind(name):
        raise UsageError(f"no model kind {name!r}; the kinds are {', '.join(list_model_kinds())}")
    return MODEL_KINDS[name]


def kind_of_config(config: dict) -> str:
    """The kind of a saved model config: its own ``"kind"`` (``"unet"``), else its backbone's.

    Backbone + head models save ``{"backbone": {"kind": ..., ...}, "num_features": n}`` (the format
    since the first release); whole models put their kind at the top.
    """
    kind = config.get("kind") or (config.get("backbone") or {}).get("kind")
    if not isinstance(kind, str):
        raise KeyError("kind")
    return kind
