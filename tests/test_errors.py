"""Errors that say what is wrong and keep their cause (item 18).

hotstart's own errors share a base (`hotstart.errors.HotstartError`) and keep the built-in bases
that callers caught before; the CLI prints those as one line and lets every other exception (a
bug) keep its traceback; re-raising with the sample's name works for any exception; a broken
install does not silently turn ``compile="auto"`` off.
"""
import sys

import numpy as np
import pytest
from PIL import Image as PILImage

import hotstart
from hotstart import Image, Label
from hotstart.blocks import BlockValueError
from hotstart.datasets import ChecksumError, DatasetError, ImageLoadError
from hotstart.encodings import Encoding, OneHot
from hotstart.errors import HotstartError, SampleError, SavedModelError, UsageError
from hotstart.learner import NonFiniteLossError
from hotstart.tasks import SupervisedTask
from hotstart.write_errors import WriteError


@pytest.mark.parametrize("error, old_base", [
    (BlockValueError, ValueError), (DatasetError, ValueError), (ImageLoadError, ValueError),
    (ChecksumError, ValueError), (SavedModelError, ValueError), (UsageError, ValueError),
    (SampleError, ValueError), (NonFiniteLossError, FloatingPointError), (WriteError, OSError),
])
def test_hotstarts_errors_share_a_base_and_keep_theirs(error, old_base):
    assert issubclass(error, HotstartError) and issubclass(error, old_base)


class _CodedError(ValueError):
    """An exception whose constructor does not take a message (like many libraries' errors)."""

    def __init__(self, code: int, detail: str):
        super().__init__(f"code {code}: {detail}")
        self.code = code


class _Raises(Encoding):
    def __init__(self, error):
        self.error = error

    def encoded_block(self, block):
        return block if isinstance(block, Image) else None

    def encode(self, block, value, context, rng=None):
        raise self.error


def _sample():
    return PILImage.fromarray(np.zeros((4, 4, 3), np.uint8)), "a"


# Files that raise plain ValueError / TypeError on purpose, and why
PLAIN_RAISES = {
    # the model contract (and predictor.py over it) imports nothing of hotstart's: a bundle copies it
    # alone; its errors are plain ValueErrors (errors.py), and the runtimes / the CLI wrap them
    "contract/outputs.py": "the model contract imports nothing of hotstart's (see contract/errors.py)",
    "contract/model.py": "the model contract imports nothing of hotstart's (see contract/errors.py)",
    "contract/images.py": "the model contract imports nothing of hotstart's (see contract/errors.py)",
    "contract/table_input.py": "the model contract imports nothing of hotstart's (see contract/errors.py)",
    "contract/schema.py": "json.loads parse_constant hook: turned into a MetadataError naming the key",
    "kinds.py": "two of hotstart's own classes under one kind name: a bug, not an input",
    "datasets/containers.py": "a non-integer index: Python's sequence protocol, as a list raises",
    "export/c/qmath.py": "Q31 arithmetic limits inside the C export's graph conversion",
}


def test_hotstart_raises_no_plain_value_or_type_error_about_its_inputs():
    """Every deliberate error is a HotstartError (so the CLI prints one line), outside PLAIN_RAISES."""
    import ast
    from pathlib import Path

    root = Path(hotstart.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            exc = node.exc.func if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) else None
            if isinstance(exc, ast.Name) and exc.id in ("ValueError", "TypeError") and name not in PLAIN_RAISES:
                found.append(f"{name}:{node.lineno} {exc.id}")
    assert not found, found


def test_encode_errors_name_the_sample_whatever_their_constructor():
    task = SupervisedTask((Image(), Label(["a", "b"])), [_Raises(_CodedError(7, "bad pixel")), OneHot()])
    with pytest.raises(SampleError, match=r"^sample 5: code 7: bad pixel$") as info:
        task.encode_sample(_sample(), "validation", where="sample 5")
    assert isinstance(info.value.__cause__, _CodedError) and info.value.__cause__.code == 7
    with pytest.raises(_CodedError):  # no sample named: the original error, untouched
        task.encode_sample(_sample(), "validation")

    # a TypeError is most likely a bug: same type, same traceback, the sample in a note
    bug = TypeError("unsupported operand")
    task = SupervisedTask((Image(), Label(["a", "b"])), [_Raises(bug), OneHot()])
    with pytest.raises(TypeError) as info:
        task.encode_sample(_sample(), "validation", where="sample 6")
    assert info.value is bug and "while encoding sample 6" in info.value.__notes__

    # a value that does not fit its block stays a BlockValueError, naming the sample
    with pytest.raises(BlockValueError, match="^sample 8: .*'c'"):
        task.encode_sample((_sample()[0], "c"), "validation", where="sample 8")


def test_compile_auto_does_not_hide_a_broken_install(monkeypatch, make_learner):
    from hotstart.learner.compiling import AutoCompile

    monkeypatch.setitem(sys.modules, "hotstart.compile_cache", None)  # importing it raises ImportError
    with pytest.raises(ImportError):
        AutoCompile("a key", "cpu")
    with pytest.raises(ImportError):
        make_learner(compile="auto")
    assert make_learner(compile=False).compiled is None  # nothing compiled, nothing asked of the cache


# --- the command line --------------------------------------------------------------------------

def test_cli_prints_hotstarts_errors_as_one_line(monkeypatch, tmp_path, capsys):
    from hotstart.cli import main, train

    for error in (SavedModelError(f"{tmp_path}/task.json is not valid JSON"),
                  DatasetError("ImageFolders: x has no class folders"),
                  FileNotFoundError(f"{tmp_path}/photos: no such file or folder"),
                  NonFiniteLossError("loss is nan at epoch 0")):
        monkeypatch.setattr(train, "run", lambda args, e=error: (_ for _ in ()).throw(e))
        assert main(["train"]) == 1
        err = capsys.readouterr().err
        assert err == f"error: {error}\n"


@pytest.mark.parametrize("bug", [TypeError("'NoneType' object is not subscriptable"), KeyError("size"),
                                 AttributeError("no attribute 'dataset'"), ZeroDivisionError("division by zero")])
def test_cli_lets_bugs_keep_their_traceback(monkeypatch, bug):
    from hotstart.cli import main, train

    monkeypatch.setattr(train, "run", lambda args: (_ for _ in ()).throw(bug))
    with pytest.raises(type(bug)):
        main(["train"])


def test_cli_reports_a_damaged_saved_model_cleanly(tmp_path, capsys):
    """A hotstart error from deep inside (loading a damaged model) reaches the CLI's one line."""
    from hotstart.cli import USER_ERRORS

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "task.json").write_text("{")
    (tmp_path / "m" / "weights.safetensors").write_bytes(b"")
    with pytest.raises(USER_ERRORS) as info:
        hotstart.load_learner(tmp_path / "m")
    assert str(tmp_path / "m" / "task.json") in str(info.value)
