"""`hotstart train --out DIR` replaces DIR/model/, DIR/history.csv and DIR/loss.png as one set
(hotstart/cli/train_outputs.py, hotstart/run_folder.py). They were written one by one, so a run
killed just after its model/ was swapped in left the new model beside the old run's history.

Torch-free: a stand-in learner whose `save` writes a model folder as `learner.save` does
(`write_folder`), and whose history and loss plot are of its run."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from killed_child import KILL_AT_STEP  # tests/ is on sys.path

from hotstart.atomic_folder import write_folder
from hotstart.cli.train_outputs import write_outputs
from hotstart.deploy import model_folder
from hotstart.run_folder import RUN_SET
from hotstart.sibling_set import journal_path

REPO = Path(__file__).resolve().parents[1]


class Run:
    """A stand-in learner of run `n`: its model, history and plot all say `n`."""

    def __init__(self, n: int):
        self.n = n
        self.backend = SimpleNamespace(is_global_zero=True)
        self.history = [{"epoch": e, "train_loss": 1.0 / (e + 1)} for e in range(n)]

    def save(self, path):
        return write_folder(path, {"weights.safetensors": b"w%d" % self.n, "task.json": b'{"run": %d}' % self.n})

    def plot_loss(self):
        return SimpleNamespace(savefig=lambda buf, **k: buf.write(b"png%d" % self.n))


def run_of(out: Path) -> set:
    """Which run each output is of: {n} for a whole set, several for a mix."""
    model = (out / "model" / "task.json").read_text()
    rows = len((out / "history.csv").read_text().splitlines()) - 1
    return {int(model.split(":")[1].strip(" }")), rows, int((out / "loss.png").read_bytes()[3:])}


def test_outputs_are_written_and_replaced_with_the_users_files_kept(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert write_outputs(Run(1), tmp_path) == [tmp_path / "model", tmp_path / "history.csv", tmp_path / "loss.png"]
    write_outputs(Run(2), tmp_path)
    assert run_of(tmp_path) == {2}
    assert sorted(os.listdir(tmp_path)) == ["history.csv", "loss.png", "model", "notes.txt"]
    assert sorted(os.listdir(tmp_path / "model")) == ["task.json", "weights.safetensors"]


def test_a_model_folder_holding_your_files_is_refused_and_nothing_changes(tmp_path):
    write_outputs(Run(1), tmp_path)
    (tmp_path / "model" / "mine.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="mine.txt"):
        write_outputs(Run(2), tmp_path)
    assert run_of(tmp_path) == {1} and (tmp_path / "model" / "mine.txt").exists()


CHILD = "import sys\n" + KILL_AT_STEP + textwrap.dedent("""
    sys.path[:0] = [{repo!r}, {tests!r}]
    from test_train_outputs_unit import Run
    from hotstart.cli.train_outputs import write_outputs
    from pathlib import Path
    write_outputs(Run(2), Path(sys.argv[2]))
    print("done", _steps[0])
""")



def test_a_run_killed_at_any_step_leaves_the_old_runs_set_or_the_new_ones(tmp_path):
    """SIGKILL the writer at each rename/replace/unlink/rmtree: once hotstart next reads the
    folder (`model_folder`, as export and predict do), it holds run 1's set or run 2's, whole."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(repo=str(REPO), tests=str(REPO / "tests")))
    seen = set()
    for kill_at in range(1, 80):
        out = tmp_path / f"k{kill_at}"
        write_outputs(Run(1), out)
        r = subprocess.run([sys.executable, str(script), str(kill_at), str(out)], capture_output=True, text=True,
                           timeout=60)
        if r.returncode == 0:
            assert run_of(out) == {2}
            break
        assert r.returncode == -9, r.stderr
        try:
            whole = len(run_of(out)) == 1
        except FileNotFoundError:  # model/ moved aside, the new one not yet in
            whole = False
        if not whole:
            assert journal_path(out, RUN_SET).exists()  # a mix on disk is flagged
        assert model_folder(out if kill_at % 2 else out / "model") == out / "model"  # either name finishes it
        assert len(run_of(out)) == 1, (kill_at, run_of(out))
        seen |= run_of(out)
        left = sorted(n for n in os.listdir(out) if not n.startswith(".model.new-"))  # write_folder's own, see
        assert left == ["history.csv", "loss.png", "model"], (kill_at, left)      # atomic_folder.read_folder
    else:
        pytest.fail("the writer never finished")
    assert seen == {1, 2}
