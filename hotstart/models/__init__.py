"""Models: what `tasklearner` builds for a task, and rebuilds from ``task.json``.

One registry and one factory, as timm's ``_registry.py`` / ``_factory.py`` / ``_builder.py``:

    registry.py       the table of model kinds (`MODEL_KINDS`): list_model_kinds / is_model_kind / get_model_kind
    factory.py        create_model(task, backbone, **options) -> (model, config); model_from_config(config, task);
                      check_backbone (before any data is read)
    builder.py        the shared heavy work: a backbone's output width, the task's head, the saved config
    task_model.py     TaskModel: backbone + head, kept apart (freeze, compile the backbone alone)
    small_cnn.py      kind "SmallCNN": the default backbone
    small_cnn_micro.py  kind "smallcnn_micro": SmallCNN 8-16-32 (~20 k parameters), for microcontrollers
    small_cnn_maxpool.py  kind "smallcnn_maxpool": SmallCNN halving by max pooling, 16-32-64-128, small folders
    timm_backbone.py  kind "timm": any timm model name; timm's pretrained normalization stats
    user_module.py    kind "module": your nn.Module as the backbone
    tabular.py        kind "TabularModel": embeddings + MLP for tables
    unet.py           kind "unet": encoder stages + decoder, for dense outputs (segmentation)
    pretrained.py     pretrained timm weights from the local cache, or a fast failure offline
    timm_names.py     a misspelled timm name fails up front, with the names meant
    layer_groups.py   layer groups and freezing (what `freeze` / `fine_tune` and lr pairs act on)
    onnx_read.py      from_onnx(path): an .onnx file back as a trainable module (a backbone for
                      ``tasklearner(..., backbone=from_onnx(path))``), on onnx2torch

Importing this package is cheap: the registry is a table of module names, and a kind's module
(with torch and timm) is imported only when a model of that kind is built.

Adding a kind of model (say ``InceptionTime``)
----------------------------------------------
1. Write ``hotstart/models/inception_time.py`` with two functions::

       def build_model(task, *, backbone=None, pretrained=False, **options) -> (nn.Module, dict):
           # build from the task's encoded blocks (builder.input_geometry(task) for images);
           # a backbone + head model ends with builder.with_head(task, net, {"kind": "InceptionTime", ...})
       def model_from_config(config: dict, task) -> nn.Module:
           # the same model, untrained, from the dict build_model returned (it is saved as JSON)

   The config must be JSON (no classes, no tensors) and carry ``"kind"``: at the top for a whole
   model (``{"kind": "unet", ...}``), or in ``config["backbone"]`` for a backbone + head model.
   Refuse what the kind cannot use with a `UsageError` naming the argument (as tabular.py does
   for ``backbone=``).
2. Add one `ModelKind` line to ``_KINDS`` in registry.py: the name (saved in task.json, never
   renamed), the module, a one-line summary, the ``options`` its build_model takes (``layers``, ...;
   anything else given is refused by the factory) and ``by_name=True`` if ``backbone="<name>"``
   should select it.
3. Say when it is chosen: a task whose output needs it declares ``model_kind = "<name>"``
   (class attribute); a backbone kind is selected by ``backbone="<name>"`` (``by_name``).
4. Tests: tests/test_models.py runs its contract over every registered kind (build, save the
   config as JSON, rebuild, same state-dict keys and shapes); add the kind's task there.
"""
from __future__ import annotations

import importlib

from .registry import MODEL_KINDS, ModelKind, get_model_kind, is_model_kind, kind_of_config, list_model_kinds

_LAZY = {
    "TaskModel": "hotstart.models.task_model",
    "SmallCNN": "hotstart.models.small_cnn",
    "TabularBackbone": "hotstart.models.tabular",
    "UNet": "hotstart.models.unet",
    "create_model": "hotstart.models.factory",
    "model_from_config": "hotstart.models.factory",
    "check_backbone": "hotstart.models.factory",
    "from_onnx": "hotstart.models.onnx_read",
}

__all__ = ["MODEL_KINDS", "ModelKind", "get_model_kind", "is_model_kind", "kind_of_config", "list_model_kinds",
           *sorted(_LAZY)]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'hotstart.models' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
