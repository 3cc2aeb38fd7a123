"""``hotstart export --bundle DIR`` replaces DIR as a unit (hotstart/cli/export.py `write_bundle`,
with a manifest: hotstart/export/manifest.py). It wrote model.onnx, predictor.py, the contract folder
and README.md one by one, and checked the contract folder only when it came to it: after the
bundle's predictor had run once (Python writes hotstart_contract/__pycache__), a re-export replaced
model.onnx and predictor.py, then refused the contract folder, leaving a mix and saying nothing
had changed."""
from __future__ import annotations

import compileall
import os

import pytest

from hotstart.cli import main
from hotstart.export.manifest import MANIFEST

BUNDLE = sorted(["README.md", "hotstart_contract", MANIFEST, "model.onnx", "predictor.py"])


@pytest.fixture
def models(make_learner, tmp_path):
    """Two saved models whose ONNX files differ (other seeds)."""
    out = []
    for seed in (0, 1):
        make_learner(seed=seed).save(tmp_path / f"m{seed}")
        out.append(tmp_path / f"m{seed}")
    return out


def export(model, bundle) -> int:
    return main(["export", str(model), "--bundle", str(bundle)])


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_bundle_whose_predictor_ran_is_replaced_whole(models, tmp_path):
    bundle = tmp_path / "bundle"
    assert export(models[0], bundle) == 0
    first = (bundle / "model.onnx").read_bytes()
    compileall.compile_dir(str(bundle / "hotstart_contract"), quiet=1)  # as running predictor.py does
    assert (bundle / "hotstart_contract" / "__pycache__").is_dir()
    assert export(models[1], bundle) == 0
    assert (bundle / "model.onnx").read_bytes() != first
    assert sorted(os.listdir(bundle)) == BUNDLE
    assert not (bundle / "hotstart_contract" / "__pycache__").exists()  # derived from the old files: gone with them
    assert sorted(os.listdir(tmp_path)) == ["bundle", "m0", "m1"]  # nothing left beside it


@pytest.mark.parametrize("where", ["hotstart_contract/notes.txt", "notes.txt", "hotstart_contract/__pycache__/x.txt",
                                   "model.onnx"])
def test_a_file_of_yours_in_the_bundle_is_refused_before_anything_is_written(models, tmp_path, where, capsys):
    bundle = tmp_path / "bundle"
    assert export(models[0], bundle) == 0
    compileall.compile_dir(str(bundle / "hotstart_contract"), quiet=1)
    (bundle / where).parent.mkdir(exist_ok=True)
    (bundle / where).write_bytes(b"mine")  # a new file, or an edited one
    before = snapshot(bundle)
    assert main(["export", str(models[1]), "--bundle", str(bundle)]) != 0
    assert snapshot(bundle) == before
    err = capsys.readouterr().err
    assert f"--bundle {bundle} holds files not written by a bundle export" in err, err
    assert where.split("/")[0] in err and "nothing was changed" in err, err


def test_a_bundle_from_before_the_manifest_is_replaced(models, tmp_path):
    bundle = tmp_path / "bundle"
    assert export(models[0], bundle) == 0
    (bundle / MANIFEST).unlink()
    compileall.compile_dir(str(bundle / "hotstart_contract"), quiet=1)
    assert export(models[1], bundle) == 0
    assert sorted(os.listdir(bundle)) == BUNDLE


def test_an_out_inside_the_bundle_is_refused_before_the_export(models, tmp_path, capsys):
    """The bundle replaces its folder whole: an --out written into it first would be deleted (or,
    found by the swap, make it fail after the --out export)."""
    bundle = tmp_path / "bundle"
    assert main(["export", str(models[0]), "--out", str(bundle / "digits.onnx"), "--bundle", str(bundle)]) != 0
    assert "lies in --bundle" in capsys.readouterr().err
    assert not bundle.exists()
