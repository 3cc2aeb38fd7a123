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
    without, it is ready for `predict`. A model of your own ``nn.Module`` cannot be rebuilt from
    JSON: pass it again as `model=`, built as for training. Trained with
    ``tasklearner(backbone=YourNet())``, pass the backbone (hotstart adds the task's head, as it
    did then) or the whole model (``learner.task_model()``); trained with ``tasklearner(model=YourNet())``,
    pass the whole model. A model that does not fit the saved weights is a `SavedModelError`
    saying what to pass (models/user_module.py).
    A damaged or mismatched folder raises `SavedModelError` naming the file.

    `seed` (in `kwargs`) seeds the rebuilt model's initial weights, drawn before the saved ones
    replace them, in a fork of torch's RNG as ``tasklearner`` does (learner/rng.py): timm's and
    torch's initializers draw from the global RNG, and loading a model must leave the caller's
    RNG as it was. None: a fresh seed, kept as ``learner.seed`` as ``tasklearner`` does.
    """
    from ..arguments import check_int
    from ..models.factory import model_from_config
    from ..models.registry import kind_of_config
    from ..models.user_module import what_to_pass, with_given_module
    from ..tasks import SupervisedTask
    from .rng import fresh_seed, seeded_torch_rng
    from .tasklearner import tasklearner

    seed = kwargs.get("seed")
    kwargs["seed"] = seed = fresh_seed() if seed is None else check_int("seed", seed)
    folder, meta, weights = read_saved(path)
    where = folder / TASK
    task = _rebuild("task", where, lambda: SupervisedTask.from_dict(meta["task"]))
    cfg = meta["model"]
    given = model
    if model is None:
        with seeded_torch_rng(seed):  # the initializers' draws: not from the caller's RNG
            model = _rebuild("model", where, lambda: model_from_config(cfg, task))
    elif _rebuild("model", where, lambda: kind_of_config(cfg)) == "module":  # your backbone gets the task's head
        with seeded_torch_rng(seed):
            model = with_given_module(cfg, task, model)
    learner = tasklearner(task, data, model=model, **kwargs)
    learner.model_config = cfg  # what the next save writes: the config this model was saved with
    try:
        load_state(learner.task_model(), weights, folder / WEIGHTS)
    except SavedModelError as e:
        if given is None:
            raise
        told = what_to_pass(cfg) if kind_of_config(cfg) == "module" else "pass a model built as for training"
        raise SavedModelError(f"load_learner: the model passed as model= ({type(given).__name__}) is not the "
                              f"saved one: {e}. {told}") from None
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
