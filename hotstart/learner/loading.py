"""`load_learner`: rebuild a learner from a folder that `Learner.save` wrote (serialization.py).

Apart from serialization.py because it builds a learner (`tasklearner`), and the learner's own
``save`` / ``load`` use serialization.py: one file for both would be a circle of imports.
"""
from __future__ import annotations

from ..errors import SavedModelError
from .serialization import TASK, WEIGHTS, load_state, read_saved


def load_learner(path, data=None, *, model=None, **kwargs):
    """Rebuild a learner from a saved folder: the task from JSON, the model from its config.

    With `data`, the learner can keep training (``tasklearner`` arguments go in `kwargs`);
    without, it is ready for `predict`. A model built from your own ``nn.Module`` backbone
    cannot be rebuilt from JSON: pass it as `model=` (the full model, backbone and head).
    A damaged or mismatched folder raises `SavedModelError` naming the file.

    `seed` (in `kwargs`) seeds the rebuilt model's initial weights, drawn before the saved ones
    replace them, in a fork of torch's RNG as ``tasklearner`` does (learner/rng.py): timm's and
    torch's initializers draw from the global RNG, and loading a model must leave the caller's
    RNG as it was. None: a fresh seed, kept as ``learner.seed`` as ``tasklearner`` does.
    """
    from ..arguments import check_int
    from ..models.factory import model_from_config
    from ..tasks import SupervisedTask
    from .rng import fresh_seed, seeded_torch_rng
    from .tasklearner import tasklearner

    seed = kwargs.get("seed")
    kwargs["seed"] = seed = fresh_seed() if seed is None else check_int("seed", seed)
    folder, meta, weights = read_saved(path)
    where = folder / TASK
    task = _rebuild("task", where, lambda: SupervisedTask.from_dict(meta["task"]))
    cfg = meta["model"]
    if model is None:
        with seeded_torch_rng(seed):  # the initializers' draws: not from the caller's RNG
            model = _rebuild("model", where, lambda: model_from_config(cfg, task))
    learner = tasklearner(task, data, model=model, **kwargs)
    learner.model_config = cfg  # what the next save writes: the config this model was saved with
    load_state(learner.task_model(), weights, folder / WEIGHTS)
    return learner


def _rebuild(what: str, where, build):
    """Run `build()`; turn what a damaged description makes it raise into a SavedModelError."""
    try:
        return build()
    except SavedModelError:
        raise
    except KeyError as e:
        raise SavedModelError(f"{where}: cannot rebuild the {what}: the key {e} is missing") from e
    except (TypeError, ValueError, AttributeError, IndexError, RuntimeError) as e:
        raise SavedModelError(f"{where}: cannot rebuild the {what}: {e}") from e
