"""Issue 9, item 21 and the table probes of item 23: `ImageTable` stays in its folder, reads only
UTF-8 (or the encoding named), reports every bad cell by file, row and column, and keeps
repeated rows out of training and validation at once."""
import warnings

import pytest
from PIL import Image as PILImage

from hotstart import Image, ImageClassificationSingle, tasklearner
from hotstart.datasets import DatasetError, ImageTable, source_index


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "table"
    for name, value in (("a", 0), ("b", 80), ("c", 160), ("d", 240)):
        (root / "imgs").mkdir(parents=True, exist_ok=True)
        PILImage.new("L", (6, 6), value).save(root / "imgs" / f"{name}.png")
    PILImage.new("L", (6, 6), 33).save(tmp_path / "secret.png")  # outside the table's folder
    return root


def _csv(folder, text, name="t.csv", encoding="utf-8"):
    path = folder / name
    path.write_bytes(text.encode(encoding))
    return path


# --- confinement -----------------------------------------------------------------------------

@pytest.mark.parametrize("cell, problem", [
    ("../secret.png", "leads outside"),
    ("imgs/../../secret.png", "leads outside"),
    ("ABSOLUTE", "is an absolute path"),
])
def test_paths_outside_the_folder_are_refused(folder, cell, problem):
    """Before: the loader opened whatever file the table named."""
    cell = str(folder.parent / "secret.png") if cell == "ABSOLUTE" else cell
    csv = _csv(folder, f"file,label\nimgs/a.png,x\n{cell},y\n")
    with pytest.raises(DatasetError, match=rf"t\.csv row 2 .*{problem}.*allow_outside=True"):
        ImageTable(csv, "file", "label")


def test_allow_outside_opts_in(folder):
    absolute = folder / "imgs" / "d.png"
    csv = _csv(folder, f"file,label\n../secret.png,x\n{absolute},y\n")
    data, _ = ImageTable(csv, "file", "label", allow_outside=True)
    assert [data.inputs[i].getpixel((0, 0)) for i in range(2)] == [33, 240]
    # inside paths that wander and come back stay allowed without the opt-in
    data, _ = ImageTable(_csv(folder, "file,label\n./imgs/../imgs/a.png,x\n"), "file", "label")
    assert data.inputs[0].getpixel((0, 0)) == 0


# --- encodings ---------------------------------------------------------------------------------

def test_csv_that_is_not_utf8_names_the_file_and_line(folder):
    csv = _csv(folder, "file,label\nimgs/a.png,caf\u00e9\n", encoding="latin-1")
    with pytest.raises(DatasetError, match=r"t\.csv is not utf-8-sig text \(line 2.*encoding="):
        ImageTable(csv, "file", "label")
    data, (_, label) = ImageTable(csv, "file", "label", encoding="latin-1")
    assert label.classes == ["caf\u00e9"]


def test_bom_and_quotes(folder):
    (folder / "imgs" / "a, b.png").write_bytes((folder / "imgs" / "b.png").read_bytes())
    csv = _csv(folder, '\ufeff"file","label"\n"imgs/a, b.png","say ""hi"""\n', encoding="utf-8")
    data, (_, label) = ImageTable(csv, "file", "label")
    assert label.classes == ['say "hi"'] and data.inputs[0].getpixel((0, 0)) == 80


# --- bad cells ---------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("imgs/a.png,x\n,y\n", r"row 2 \(line 3\) has an empty 'file'"),
    ("imgs/a.png,x\nNaN,y\n", r"row 2 \(line 3\) has 'NaN' in 'file', a missing value"),
    ("imgs/a.png,x\nimgs/b.png,nan\n", r"row 2 \(line 3\) has 'nan' in 'label', a missing value"),
    ("imgs/a.png,x\nimgs/b.png,\n", r"row 2 \(line 3\) has an empty 'label'"),
    ("imgs/a.png,x\nimgs/b.png\n", r"row 2 \(line 3\) has no 'label' cell"),
    ("imgs/a.png,x\nimgs/b.png,y,z\n", r"row 2 \(line 3\) has 3 cells but the header has 2"),
    ("imgs/a.png,x\nimgs,y\n", r"row 2 .*imgs is not a file"),
    ("imgs/a.png,x\nimgs/zz.png,y\n", r"row 2 .*zz\.png does not exist"),
    ('imgs/a.png,x\n"imgs/b.png,y\n', r"row 2 \(line 3\) has no 'label' cell"),  # an unclosed quote
])
def test_bad_cells_name_file_row_and_column(folder, body, message):
    with pytest.raises(DatasetError, match=r"t\.csv " + message):
        ImageTable(_csv(folder, "file,label\n" + body), "file", "label")


def test_nul_byte_is_a_csv_error_naming_the_file(folder):
    csv = _csv(folder, "file,label\nimgs/a.png,x\x00y\n")
    try:
        data, (_, label) = ImageTable(csv, "file", "label")
    except DatasetError as e:
        assert "t.csv" in str(e)
    else:  # Python >= 3.11's csv reads NUL bytes as characters: then it is a label like any other
        assert label.classes == ["x\x00y"]


def test_extra_and_reordered_columns_are_fine(folder):
    csv = _csv(folder, "id,label,notes,file\n1,x,hello,imgs/a.png\n2,y,,imgs/b.png\n")
    data, (_, label) = ImageTable(csv, "file", "label")
    assert label.classes == ["x", "y"] and list(data.targets) == ["x", "y"]


# --- repeated rows ---------------------------------------------------------------------------

def test_repeated_rows_are_dropped_with_a_warning_and_never_straddle_the_split(folder):
    """Before: each repeat was a sample of its own, so one file could be trained and validated on."""
    rows = ["imgs/a.png,x", "imgs/b.png,y", "imgs/c.png,x", "imgs/d.png,y"]
    body = "\n".join(rows + ["./imgs/a.png,x", "imgs/b.png,y", "imgs/c.png,x"] * 3) + "\n"
    with pytest.warns(UserWarning, match=r"dropped 9 repeated row\(s\).*row 5 repeats row 1"):
        data, (_, label) = ImageTable(_csv(folder, "file,label\n" + body), "file", "label")
    files = [str(p) for p in data.inputs.container]
    assert len(files) == 4 and len(set(files)) == 4
    task = ImageClassificationSingle((Image(), label), size=(8, 8))
    learner = tasklearner(task, data, batch_size=2, seed=0, progress=False, valid_pct=0.5)
    used = [{files[source_index(dl.dataset.inputs, i)] for i in range(len(dl.dataset))}
            for dl in (learner.train_loader, learner.valid_loader)]
    assert not used[0] & used[1]


def test_repeated_file_with_another_label_names_both_rows(folder):
    csv = _csv(folder, "file,label\nimgs/a.png,x\nimgs/b.png,y\nimgs/a.png,y\n")
    with pytest.raises(DatasetError, match=r"row 3 .*a\.png again with label 'y', but row 1 gave it 'x'"):
        ImageTable(csv, "file", "label")


def test_multi_label_repeats_compare_as_sets(folder):
    csv = _csv(folder, 'file,tags\nimgs/a.png,"p q"\nimgs/a.png,"q p"\nimgs/b.png,p\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data, (_, label) = ImageTable(csv, "file", "tags", label_sep=" ")
    assert len(data.targets) == 2 and any("repeated" in str(w.message) for w in caught)


def test_tsv_is_read_with_tabs(folder):
    """The CLI accepts .tsv tables; before, they were parsed as CSV and had no columns."""
    tsv = _csv(folder, "file\tlabel\nimgs/a.png\tx, y\n", name="t.tsv")
    data, (_, label) = ImageTable(tsv, "file", "label")
    assert label.classes == ["x, y"]


def test_cli_allow_outside(folder, tmp_path):
    import argparse

    from hotstart.cli.train import load_data

    csv = _csv(folder, "path,label\n../secret.png,x\nimgs/a.png,y\n")
    args = argparse.Namespace(path=str(csv), path_col="path", label_col="label", label_sep=None,
                              allow_outside=False)
    with pytest.raises(DatasetError, match="allow_outside"):
        load_data(args)
    args.allow_outside = True
    data, _, _ = load_data(args)
    assert data.inputs[0].getpixel((0, 0)) == 33


@pytest.mark.parametrize("cell", ["..\\secret.png", "imgs\\..\\..\\secret.png", "C:\\secret.png", "\\\\host\\share\\x.png"])
def test_windows_style_escapes_are_refused(folder, cell):
    csv = _csv(folder, f"file,label\nimgs/a.png,x\n{cell},y\n")
    with pytest.raises(DatasetError, match=r"row 2 .*(leads outside|is an absolute path)"):
        ImageTable(csv, "file", "label")
