"""A saved model is one unit: killed at any moment, a save leaves the old model or the new one.

A child process (forked from this one, so it starts in milliseconds) saves two distinguishable
models in turn into one folder and is SIGKILLed, at random moments and at each step of the
folder swap; after every kill `load_learner` must give one of the two models exactly: its task
and its weights, never one model's weights beside the other's task, and never nothing.
"""
import json
import os
import random
import select
import shutil
import signal
import stat
import time

import pytest
import torch
from conftest import state_equal

import hotstart
from hotstart import Image, ImageClassificationSingle, Label
from hotstart.errors import HotstartError, SavedModelError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill tests fork")


def _learner(classes, seed):
    task = ImageClassificationSingle((Image(channels=1), Label(classes)), size=8, augment={"flip": 0.0})
    return hotstart.tasklearner(task, None, seed=seed, progress=False)


@pytest.fixture(scope="module")
def two_models():
    """Two learners whose tasks (class names) and weights (seeds) both differ."""
    return _learner(list(range(10)), 0), _learner(list("abcdefghij"), 1)


def _which(folder, models) -> int:
    """Index of the model the folder holds; fails unless task AND weights are one model's."""
    loaded = hotstart.load_learner(folder)
    state = loaded.task_model().state_dict()
    for i, m in enumerate(models):
        if loaded.task == m.task:
            assert state_equal(state, m.task_model().state_dict()), f"task of model {i} beside other weights"
            return i
    raise AssertionError(f"the loaded task is neither model's: {loaded.task!r}")


def _fork(body) -> int:
    """Run `body()` in a forked child that never returns into pytest; the child's pid."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(3)  # only reached if body returned or raised: the parent reports it
    return pid


def _wait(pid, timeout=30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the child did not finish")


def _assert_modes(folder):
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    for f in folder.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_killed_at_random_moments_leaves_old_or_new(two_models, tmp_path, umask_022):
    a, b = two_models
    folder = tmp_path / "model"
    a.save(folder)
    t0 = time.perf_counter()
    for _ in range(3):
        b.save(folder)
    one_save = (time.perf_counter() - t0) / 3
    a.save(folder)
    done_r, done_w = os.pipe()  # the child writes a byte after each finished save

    def save_forever():
        os.close(done_r)
        while True:
            for m in (b, a):
                m.save(folder)
                os.write(done_w, b".")

    rng = random.Random(0)
    seen = set()
    for _ in range(32):
        pid = _fork(save_forever)
        for _ in range(rng.randrange(3)):  # let it finish 0, 1 or 2 saves (a, b or a committed) ...
            assert os.read(done_r, 1) == b"."
        time.sleep(rng.uniform(0, 1.5 * one_save))  # ... then kill it at a random point of the next
        os.kill(pid, signal.SIGKILL)
        status = _wait(pid)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "the saving child failed"
        while select.select([done_r], [], [], 0)[0]:  # saves it finished after we stopped counting
            os.read(done_r, 1)
        seen.add(_which(folder, two_models))
    os.close(done_r)
    os.close(done_w)
    assert seen == {0, 1}

    b.save(folder)  # the next save finishes what the killed ones left, and removes their leftovers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert sorted(p.name for p in folder.iterdir()) == ["task.json", "weights.safetensors"]
    assert _which(folder, two_models) == 1
    _assert_modes(folder)


# Each step of a save, in order; the child kills itself just before step k (or in the middle of
# the last one), so every state a crash can leave behind is loaded at least once.
STEPS = ["write weights", "write task", "move old aside", "move new in", "remove old", "mid remove old"]


@pytest.mark.parametrize("k", range(len(STEPS)), ids=STEPS)
def test_killed_at_each_step_of_the_swap(two_models, tmp_path, umask_022, k, monkeypatch):
    import hotstart.atomic_folder as af

    a, b = two_models
    folder = tmp_path / "model"
    a.save(folder)
    steps = iter(range(len(STEPS)))

    def step(real, *, mid=False):
        def wrapped(*args, **kwargs):
            i = next(steps)
            if i == k:
                os.kill(os.getpid(), signal.SIGKILL)
            if mid and i + 1 == k:  # remove one file of the old folder, then die
                os.unlink(next(p for p in args[0].iterdir()))
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return wrapped

    def save_once():
        monkeypatch.setattr(af, "atomic_write_bytes", step(af.atomic_write_bytes))
        monkeypatch.setattr(af.os, "rename", step(os.rename))
        monkeypatch.setattr(af.shutil, "rmtree", step(shutil.rmtree, mid=True))
        b.save(folder)

    status = _wait(_fork(save_once))
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "the child was not killed"
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != "model")
    assert leftovers, "a killed save leaves its temporary folder (removed by the next save)"
    if STEPS[k] == "move new in":  # between the two renames: no folder at the target at all
        assert not folder.exists()
    expected = 0 if k <= STEPS.index("move new in") else 1
    assert _which(folder, two_models) == expected

    a.save(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert _which(folder, two_models) == 0
    _assert_modes(folder)


def test_loading_while_another_process_saves(two_models, tmp_path):
    """A reader never sees a mix, even in the middle of a swap (it reads through one folder handle)."""
    a, b = two_models
    folder = tmp_path / "model"
    a.save(folder)

    def save_forever():
        while True:
            for m in (b, a):
                m.save(folder)

    pid = _fork(save_forever)
    try:
        seen = [_which(folder, two_models) for _ in range(20)]
    finally:
        os.kill(pid, signal.SIGKILL)
        _wait(pid)
    assert set(seen) <= {0, 1}


def test_save_refuses_a_folder_with_other_files(two_models, tmp_path):
    a, _ = two_models
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        a.save(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="not a folder"):
        a.save(tmp_path / "file")


# --- a diverged model is never saved (item 19) ----------------------------------------------

def test_save_refuses_non_finite_parameters_and_buffers(tmp_path):
    learner = _learner(list(range(10)), 0)
    model = learner.task_model()
    learner.save(tmp_path / "good")
    for name, tensor in [("running_var", next(b for n, b in model.named_buffers() if n.endswith("running_var"))),
                         ("weight", model.head.weight)]:
        saved = tensor.detach().clone()
        with torch.no_grad():
            tensor.view(-1)[0] = float("inf") if name == "running_var" else float("nan")
        with pytest.raises(SavedModelError, match=f"{name}.*NaN or infinite"):
            learner.save(tmp_path / "good")
        with torch.no_grad():
            tensor.copy_(saved)
    assert _which(tmp_path / "good", [learner]) == 0  # the earlier save is untouched


# --- damaged saved models: one clear error naming the file (item 22) -------------------------

def _edit(key_path, value):
    """A task.json edit: set (or with value=KeyError, delete) the entry at `key_path`."""
    def edit(meta):
        node = meta
        for k in key_path[:-1]:
            node = node[k]
        if value is KeyError:
            del node[key_path[-1]]
        else:
            node[key_path[-1]] = value
        return meta
    return edit


TASK_JSON_DAMAGE = {
    "empty": b"",
    "not json": b"{not json",
    "truncated": None,  # filled in from the real file
    "binary": b"\xff\xfe\x00garbage",
    "a list": b"[1, 2, 3]",
    "a string": b'"hello"',
    "null": b"null",
    "no format": _edit(["format"], KeyError),
    "wrong format": _edit(["format"], "hotstart.learner/0"),
    "no task": _edit(["task"], KeyError),
    "task is a list": _edit(["task"], []),
    "no model": _edit(["model"], KeyError),
    "model is a number": _edit(["model"], 3),
    "unknown task kind": _edit(["task", "kind"], "NoSuchTask"),
    "task kind a number": _edit(["task", "kind"], 7),
    "no task kind": _edit(["task", "kind"], KeyError),
    "no blocks": _edit(["task", "blocks"], KeyError),
    "blocks not a list": _edit(["task", "blocks"], 5),
    "one block": _edit(["task", "blocks"], [{"kind": "Image", "channels": 1}]),
    "block is a string": _edit(["task", "blocks", 0], "Image"),
    "unknown block kind": _edit(["task", "blocks", 0, "kind"], "Picture"),
    "block bad argument": _edit(["task", "blocks", 0, "colour"], True),
    "no classes": _edit(["task", "blocks", 1, "classes"], KeyError),
    "classes a number": _edit(["task", "blocks", 1, "classes"], 10),
    "size a string": _edit(["task", "size"], "big"),
    "size negative": _edit(["task", "size"], [-8, 8]),
    "no size": _edit(["task", "size"], KeyError),
    "mean not numbers": _edit(["task", "mean"], ["a"]),
    "augment unknown": _edit(["task", "augment"], {"spin": 1}),
    "augment flip 5": _edit(["task", "augment"], {"flip": 5}),
    "augment scale reversed": _edit(["task", "augment"], {"scale": [1.0, 0.5]}),
    "no backbone": _edit(["model", "backbone"], KeyError),
    "backbone a string": _edit(["model", "backbone"], "resnet"),
    "backbone kind unknown": _edit(["model", "backbone", "kind"], "mystery"),
    "widths a string": _edit(["model", "backbone", "widths"], "wide"),
    "backbone size negative": _edit(["model", "backbone", "size"], [-1, 16]),
    "num_features a string": _edit(["model", "num_features"], "many"),
    "num_features negative": _edit(["model", "num_features"], -1),
    "no num_features": _edit(["model", "num_features"], KeyError),
    "other num_features": _edit(["model", "num_features"], 17),
    "other widths": _edit(["model", "backbone", "widths"], [4, 4]),
    "other classes": _edit(["task", "blocks", 1, "classes"], [0, 1, 2]),
}
# the damage whose error must also name the key (before, these loaded without a word)
KEY_NAMED = {"augment flip 5": "augment option flip", "augment scale reversed": "augment option scale",
             "backbone size negative": "size"}


@pytest.fixture(scope="module")
def saved(two_models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved") / "model"
    two_models[0].save(folder)
    return folder


def _copy(saved, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(saved, folder)
    return folder


@pytest.mark.parametrize("damage", list(TASK_JSON_DAMAGE), ids=list(TASK_JSON_DAMAGE))
def test_damaged_task_json_is_a_clear_error(saved, tmp_path, damage):
    folder = _copy(saved, tmp_path)
    f = folder / "task.json"
    how = TASK_JSON_DAMAGE[damage]
    if how is None:
        f.write_bytes(f.read_bytes()[:57])
    elif callable(how):
        f.write_text(json.dumps(how(json.loads(f.read_text()))))
    else:
        f.write_bytes(how)
    with pytest.raises(SavedModelError) as info:
        hotstart.load_learner(folder)
    msg = str(info.value)
    which = "weights.safetensors" if damage.startswith("other ") else "task.json"
    assert str(folder / which) in msg, msg
    assert KEY_NAMED.get(damage, "") in msg, msg
    assert isinstance(info.value, (HotstartError, ValueError))


WEIGHTS_DAMAGE = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "header only": lambda data: data[:8],
    "garbage": lambda data: os.urandom(len(data)),
}


@pytest.mark.parametrize("damage", list(WEIGHTS_DAMAGE), ids=list(WEIGHTS_DAMAGE))
def test_damaged_weights_are_a_clear_error(saved, tmp_path, damage):
    folder = _copy(saved, tmp_path)
    f = folder / "weights.safetensors"
    f.write_bytes(WEIGHTS_DAMAGE[damage](f.read_bytes()))
    with pytest.raises(SavedModelError, match="weights.safetensors"):
        hotstart.load_learner(folder)


def test_a_folder_in_place_of_the_weights_is_a_clear_error(saved, tmp_path):
    """It was ``IsADirectoryError: [Errno 21] Is a directory: 4``: the number of a file handle."""
    folder = _copy(saved, tmp_path)
    (folder / "weights.safetensors").unlink()
    (folder / "weights.safetensors").mkdir()
    with pytest.raises(SavedModelError, match="weights.safetensors is a folder, not a file") as info:
        hotstart.load_learner(folder)
    assert str(folder / "weights.safetensors") in str(info.value)


@pytest.fixture(scope="module")
def penguins_saved(tmp_path_factory):
    """An untrained penguin-species learner, saved: its task.json holds the preprocessing's
    statistics (vocabularies, columns with missing values) and the model's config side by side."""
    from hotstart import TabularClassificationSingle, datasets

    data, blocks = datasets.load("penguins", target="species")
    learner = hotstart.tasklearner(TabularClassificationSingle(blocks), data, seed=0, progress=False)
    row = dict(data[0][0])
    return learner.save(tmp_path_factory.mktemp("penguins") / "model"), row


def _more_islands(meta):
    meta["task"]["preprocessing"]["vocab"]["island"].append("Zzz")
    return meta


def _no_na_columns(meta):
    meta["task"]["preprocessing"]["na_columns"] = []
    return meta


def _fewer_categories_in_the_model(meta):
    meta["model"]["backbone"]["cardinalities"][1] -= 1
    return meta


def _fewer_continuous_in_the_model(meta):
    meta["model"]["backbone"]["n_cont"] -= 1
    return meta


TABLE_MISMATCH = {
    "a category added to a vocabulary": (_more_islands, "column 'island' has 5 categories"),
    "no missing-value indicators": (_no_na_columns, r"embeds 7 categorical input\(s\), the preprocessing encodes 3"),
    "a smaller embedding": (_fewer_categories_in_the_model, "column 'sex' has 3 categories.*takes 2"),
    "fewer continuous inputs": (_fewer_continuous_in_the_model, "takes 3 continuous value.*gives 4"),
}


@pytest.mark.parametrize("damage", list(TABLE_MISMATCH), ids=list(TABLE_MISMATCH))
def test_table_statistics_that_disagree_with_the_model_are_a_clear_error(penguins_saved, tmp_path, damage):
    """task.json's preprocessing and its model config must describe the same encoded row: edited
    apart, the folder loaded, then failed at predict with torch's "index out of range in self"."""
    saved, row = penguins_saved
    assert hotstart.load_learner(saved).predict({**row, "island": "Zzz"})[0]  # an unseen island: fine
    folder = _copy(saved, tmp_path)
    edit, message = TABLE_MISMATCH[damage]
    f = folder / "task.json"
    f.write_text(json.dumps(edit(json.loads(f.read_text()))))
    with pytest.raises(SavedModelError, match=message) as info:
        hotstart.load_learner(folder)
    assert str(f) in str(info.value)


def test_weights_of_another_model_are_a_clear_error(saved, tmp_path):
    from safetensors.torch import save_file

    folder = _copy(saved, tmp_path)
    other = _learner(list(range(3)), 0).task_model().state_dict()  # a 3-class head
    save_file({k: v.contiguous() for k, v in other.items()}, str(folder / "weights.safetensors"))
    with pytest.raises(SavedModelError, match=r"weights.safetensors holds the weights of another model.*head.weight"):
        hotstart.load_learner(folder)
    state = {k: v for k, v in other.items() if not k.startswith("head")}
    state["extra"] = torch.zeros(2)
    save_file(state, str(folder / "weights.safetensors"))
    with pytest.raises(SavedModelError, match=r"missing head.weight, head.bias; unexpected extra"):
        hotstart.load_learner(folder)
