"""Kind names in JSON (item 3) and value semantics (item 4) of blocks, encodings and tasks.

A user's class with the same name as one of hotstart's must never replace hotstart's when a model
is loaded; kinds are written as ``module.qualname`` for classes outside hotstart, and hotstart's
own short names (what existing task.json files hold) keep loading. Equal objects hash equal.
"""
import numpy as np
import pytest

import hotstart
from hotstart import Image, ImageClassificationSingle, Label
from hotstart.blocks import Block
from hotstart.encodings import Encoding, ImagePreprocessing, OneHot, ProjectiveTransforms
from hotstart.errors import HotstartError, UnknownKindError
from hotstart.kinds import KindRegistry
from hotstart.tasks import SupervisedTask

DIGITS = list(range(10))


def _task(classes=DIGITS):
    return ImageClassificationSingle((Image(channels=1), Label(classes)), size=8, augment={"flip": 0.0})


# --- item 3: kinds -----------------------------------------------------------------------------

def test_a_users_image_block_does_not_replace_hotstarts(tmp_path):
    hotstart.tasklearner(_task(), None, seed=0, progress=False).save(tmp_path / "m")

    class Image(Block):  # noqa: F811 - the point: a user's block named like one of hotstart's
        def _problem(self, value):
            return None

    assert Image.kind == f"{__name__}.test_a_users_image_block_does_not_replace_hotstarts.<locals>.Image"
    assert type(Block.from_dict({"kind": "Image"})) is hotstart.Image
    assert type(Block.from_dict(Image().to_dict())) is Image
    loaded = hotstart.load_learner(tmp_path / "m")
    assert type(loaded.task.input_block) is hotstart.Image and loaded.task == _task()


def test_a_users_encoding_and_task_named_like_hotstarts_round_trip_as_theirs():
    class OneHot(Encoding):  # noqa: F811
        pass

    class ImageClassificationSingle(hotstart.ImageClassificationSingle):  # noqa: F811
        pass

    assert type(Encoding.from_dict({"kind": "OneHot"})) is hotstart.encodings.OneHot
    assert type(Encoding.from_dict(OneHot().to_dict())) is OneHot
    mine = ImageClassificationSingle((Image(channels=1), Label(DIGITS)), size=8)
    d = mine.to_dict()
    assert d["kind"].endswith("<locals>.ImageClassificationSingle") and d["kind"].startswith(__name__)
    assert type(SupervisedTask.from_dict(d)) is ImageClassificationSingle
    assert type(SupervisedTask.from_dict(_task().to_dict())) is hotstart.ImageClassificationSingle


def test_hotstarts_own_classes_keep_their_short_names():
    assert _task().to_dict()["kind"] == "ImageClassificationSingle"
    assert [b["kind"] for b in _task().to_dict()["blocks"]] == ["Image", "Label"]
    encs = SupervisedTask((Image(), Label(DIGITS)), [ProjectiveTransforms(8), OneHot()]).to_dict()
    assert encs["kind"] == "SupervisedTask" and [e["kind"] for e in encs["encodings"]] == ["ProjectiveTransforms", "OneHot"]
    assert type(SupervisedTask.from_dict(encs)) is SupervisedTask
    # a full name of hotstart's own class is read too
    assert type(Block.from_dict({"kind": "hotstart.blocks.image.Image"})) is hotstart.Image


def test_any_new_hotstart_subclass_registers_itself():
    """Other parts of hotstart add blocks, encodings and tasks by subclassing, with no list to update."""
    new = type("TestOnlyTableRowBlock", (Block,), {"__module__": "hotstart.blocks.test_only", "_problem": lambda s, v: None})
    assert new.kind == "TestOnlyTableRowBlock"
    assert type(Block.from_dict({"kind": "TestOnlyTableRowBlock"})) is new


def test_two_hotstart_classes_may_not_share_a_short_name():
    registry = KindRegistry("block")
    registry.register(type("Twin", (), {"__module__": "hotstart.blocks.a"}))
    with pytest.raises(TypeError, match="two of hotstart's block classes are named 'Twin'"):
        registry.register(type("Twin", (), {"__module__": "hotstart.blocks.b"}))


def test_unknown_and_ambiguous_kinds_are_clear_errors():
    with pytest.raises(UnknownKindError, match=r"unknown block kind 'Picture'.*hotstart's own: \[.*'Image'"):
        Block.from_dict({"kind": "Picture"})
    with pytest.raises(UnknownKindError, match="unknown encoding kind 'mypkg.Nope'.*must be imported"):
        Encoding.from_dict({"kind": "mypkg.Nope"})
    with pytest.raises(UnknownKindError, match="task's kind must be a string, got None"):
        SupervisedTask.from_dict({"blocks": []})
    assert issubclass(UnknownKindError, HotstartError) and issubclass(UnknownKindError, ValueError)

    # a bare name that an older hotstart wrote for a user's class: found when exactly one has it
    one = type("TestOnlyGadget", (Block,), {"__module__": "pkg_one.blocks", "_problem": lambda s, v: None})
    assert type(Block.from_dict({"kind": "TestOnlyGadget"})) is one
    two = type("TestOnlyGadget", (Block,), {"__module__": "pkg_two.blocks", "_problem": lambda s, v: None})
    with pytest.raises(UnknownKindError, match=r"'TestOnlyGadget' is ambiguous.*pkg_one.blocks.TestOnlyGadget.*pkg_two"):
        Block.from_dict({"kind": "TestOnlyGadget"})
    assert type(Block.from_dict({"kind": "pkg_two.blocks.TestOnlyGadget"})) is two


# --- item 4: equal objects hash equal -------------------------------------------------------------

EQUAL_PAIRS = [
    (lambda: Label([1, 2, 3]), lambda: Label([1.0, 2.0, 3.0])),  # 1 == 1.0: equal, so equal hashes
    (lambda: Image(channels=1), lambda: Image(channels=1)),
    (lambda: OneHot(), lambda: OneHot()),
    (lambda: ImagePreprocessing((0.5,), (0.25,), channels=1), lambda: ImagePreprocessing((0.5,), (0.25,), channels=1)),
    (lambda: ProjectiveTransforms((8, 8), augment={"flip": 0.0}), lambda: ProjectiveTransforms(8, augment={"flip": 0}))
    ,
    (_task, _task),
    (lambda: _task(["a", "b"]), lambda: SupervisedTask.from_dict(_task(["a", "b"]).to_dict())),
]


@pytest.mark.parametrize("make_a, make_b", EQUAL_PAIRS)
def test_equal_objects_hash_equal(make_a, make_b):
    a, b = make_a(), make_b()
    assert a == b and a is not b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1 and {a: "x"}[b] == "x"


def test_unequal_objects_stay_unequal():
    assert Label([1, 2]) != Label([2, 1]) and _task() != _task(["a", "b"])
    assert ImagePreprocessing((0.5,), (0.25,), channels=1) != ImagePreprocessing((0.5,), (0.5,), channels=1)
    assert len({_task(), _task(["a", "b"]), _task()}) == 2


def test_every_block_kind_hashes_like_its_json_twin():
    rng = np.random.default_rng(0)
    for block in [Image(), Image(channels=1), Label(DIGITS), hotstart.LabelMulti(["a", "b"])]:
        twin = Block.from_dict(block.to_dict())
        assert twin == block and hash(twin) == hash(block)
        assert block.check(block.mock(rng))


# --- one base for the three families (hotstart/kinds.py) ---------------------------------------

def test_blocks_encodings_and_tasks_share_one_kinded_base():
    from hotstart.kinds import Kinded

    families = {Block: "block", Encoding: "encoding", SupervisedTask: "task"}
    assert all(issubclass(root, Kinded) and root._kinds.what == what for root, what in families.items())
    assert len({id(root._kinds) for root in families}) == 3  # a block kind never resolves to a task

    class TestOnlyWidgets(Kinded, family="widget"):  # a new family: its own registry, nothing shared
        pass

    class TestOnlyDial(TestOnlyWidgets):
        def __init__(self, turns=1):
            self.turns = turns

        def _params(self):
            return {"turns": self.turns}

    d = TestOnlyDial(2).to_dict()
    assert d == {"kind": f"{__name__}.test_blocks_encodings_and_tasks_share_one_kinded_base.<locals>.TestOnlyDial",
                 "turns": 2}
    back = TestOnlyWidgets.from_dict(d)
    assert type(back) is TestOnlyDial and back == TestOnlyDial(2.0) and hash(back) == hash(TestOnlyDial(2.0))
    assert back != TestOnlyDial(3)
    with pytest.raises(UnknownKindError, match="unknown widget kind 'Image'"):
        TestOnlyWidgets.from_dict({"kind": "Image"})
    with pytest.raises(TypeError, match="a widget is described by a dict"):
        TestOnlyWidgets.from_dict(["Image"])
