"""hotstart/gc_pause.py: heavy imports run with the cyclic collector paused, and leave it as it was."""
import gc
import sys
import weakref

import pytest

from hotstart.gc_pause import gc_paused, import_paused

N_NODES = 30 * gc.get_threshold()[0]  # ~30 young collections' worth of allocations, whatever the threshold
MODULE = f'''
class Node:
    def __init__(self):
        self.me = self  # a cycle: only the cyclic collector can free it
NODES = [Node() for _ in range({N_NODES})]
MARKER = Node()
'''


@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    """A module not imported yet that allocates many container objects, as a library's import does."""
    name = f"hotstart_gc_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def count_collections():
    counts = []

    def callback(phase, info):
        if phase == "start":
            counts.append(info["generation"])
    return counts, callback


def test_no_collection_runs_during_the_import_and_its_objects_land_in_the_oldest_generation(fresh_module):
    assert gc.isenabled()
    counts, callback = count_collections()
    gc.callbacks.append(callback)
    try:
        module = import_paused(fresh_module)
        during = list(counts)
    finally:
        gc.callbacks.remove(callback)
    assert during == []  # the control below shows the same import collecting
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    oldest = gc.get_objects(generation=2)
    assert any(o is module.MARKER for o in oldest)


def test_the_import_without_the_pause_collects(fresh_module):
    """The control: the same import, plainly, runs the collector (so the test above can fail)."""
    import importlib

    counts, callback = count_collections()
    gc.callbacks.append(callback)
    try:
        importlib.import_module(fresh_module)
    finally:
        gc.callbacks.remove(callback)
    assert len(counts) > 10


def test_a_disabled_collector_stays_disabled(fresh_module):
    gc.disable()
    try:
        import_paused(fresh_module)
        assert not gc.isenabled()
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_someone_elses_frozen_objects_stay_frozen(fresh_module):
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        import_paused(fresh_module)
        # an unfreeze would empty the permanent generation (count 0); the count may still fall by
        # a few when other threads of the test process free frozen objects meanwhile (seen: -2 of
        # 1.4 million in a full-suite run), so not an exact equality
        assert gc.get_freeze_count() >= 0.99 * frozen
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_freeze_made_by_the_import_itself_is_left_alone(tmp_path, monkeypatch):
    (tmp_path / "hotstart_gc_freezer.py").write_text("import gc\nKEEP = [object()]\ngc.freeze()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import_paused("hotstart_gc_freezer")
        assert gc.get_freeze_count() > 0  # not undone by the pause's own freeze + unfreeze
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        sys.modules.pop("hotstart_gc_freezer", None)


def test_pauses_in_two_threads_restore_once_both_end():
    import threading

    inside, release = threading.Event(), threading.Event()

    def other():
        with gc_paused():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the other thread's pause is still open
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_cyclic_garbage_made_in_the_pause_is_still_collected(fresh_module):
    module = import_paused(fresh_module)
    ref = weakref.ref(module.MARKER)
    del module.MARKER, module
    sys.modules.pop(fresh_module)
    assert ref() is not None  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert ref() is None


def test_nested_pauses_restore_once():
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_in_the_import_still_restores_the_collector(tmp_path, monkeypatch):
    (tmp_path / "hotstart_gc_broken.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match="broken on purpose"):
        import_paused("hotstart_gc_broken")
    assert gc.isenabled()
