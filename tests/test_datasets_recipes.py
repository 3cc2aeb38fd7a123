"""ImageFolders and ImageTable: layouts, laziness, determinism and errors that name the problem."""
import numpy as np
import pytest
from PIL import Image as PILImage

from hotstart.blocks import BlockValueError, Image, Label, LabelMulti
from hotstart.datasets import DatasetError, ImageFolders, ImageTable, mapobs


def _img(path, color=(200, 10, 10), size=(6, 5)):
    path.parent.mkdir(parents=True, exist_ok=True)
    PILImage.new("RGB", size, color).save(path)
    return path


@pytest.fixture
def flat(tmp_path):
    root = tmp_path / "flat"
    _img(root / "dog" / "b.png")
    _img(root / "dog" / "a.JPG")         # upper-case extension still counts
    _img(root / "cat" / "x.jpeg")
    _img(root / "cat" / "sub" / "y.png")  # nested inside a class folder
    (root / "cat" / "notes.txt").write_text("not an image")
    _img(root / "cat" / ".hidden.png")   # hidden files are skipped
    _img(root / ".ipynb_checkpoints" / "z.png")  # hidden folders are not classes
    return root


def test_image_folders_flat(flat):
    data, (image, label) = ImageFolders(flat)
    assert image == Image() and label == Label(["cat", "dog"])
    inputs, targets = data
    assert targets == ["cat", "cat", "dog", "dog"]
    assert [p.name for p in inputs.container] == ["y.png", "x.jpeg", "a.JPG", "b.png"]  # sub/y sorts before x
    assert data.splits == {}
    assert isinstance(inputs, mapobs)
    img = inputs[0]
    assert img.mode == "RGB" and img.size == (6, 5)
    for t in targets:
        label.validate(t)


def test_image_folders_is_lazy(flat):
    data, _ = ImageFolders(flat)
    bad = data.inputs.container[0]
    bad.write_bytes(b"garbage")  # listing already done; nothing was decoded
    assert data.inputs[1].size == (6, 5)
    with pytest.raises(ValueError, match="y.png"):
        data.inputs[0]


def test_image_folders_deterministic(flat):
    a, _ = ImageFolders(flat)
    b, _ = ImageFolders(flat)
    assert list(map(str, a.inputs.container)) == list(map(str, b.inputs.container))


def test_image_folders_train_valid(tmp_path):
    root = tmp_path / "split"
    for name in ("1.png", "2.png"):
        _img(root / "train" / "b" / name)
    _img(root / "train" / "a" / "1.png")
    _img(root / "valid" / "a" / "9.png")
    _img(root / "valid" / "b" / "8.png")
    _img(root / "test" / "a" / "0.png")  # a held-out split, after train and valid
    data, (_, label) = ImageFolders(root)
    assert label.classes == ["a", "b"]
    assert data.targets == ["a", "b", "b", "a", "b", "a"]
    assert data.splits == {"train": [0, 1, 2], "valid": [3, 4], "test": [5]}
    valid = data.split("valid")
    assert list(valid.targets) == ["a", "b"]
    assert valid.inputs[0].size == (6, 5)


def test_image_folders_refuse_a_class_only_valid_or_test_has(tmp_path):
    """A class with validation images and no training ones can never be predicted, and caps the
    validation accuracy without a word: refused, naming the class and the folder (as for test)."""
    root = tmp_path / "split"
    for cls in ("circle", "square"):
        _img(root / "train" / cls / "0.png")
        _img(root / "valid" / cls / "0.png")
    _img(root / "valid" / "triangle" / "0.png")
    with pytest.raises(DatasetError, match=r"validation split of .*split has class folder\(s\) \['triangle'\] "
                                           r"that the training folder lacks"):
        ImageFolders(root)
    (root / "valid" / "triangle" / "0.png").rename(root / "0.png")
    (root / "valid" / "triangle").rmdir()
    _img(root / "test" / "triangle" / "0.png")
    with pytest.raises(DatasetError, match=r"test split of .*\['triangle'\] that no training or validation"):
        ImageFolders(root)
    _img(root / "valid" / "extra" / "0.png")  # valid may lack training classes' folders, not the reverse
    _img(root / "train" / "extra" / "0.png")
    _img(root / "train" / "triangle" / "0.png")
    data, (_, label) = ImageFolders(root)
    assert label.classes == ["circle", "extra", "square", "triangle"]


def test_image_folders_custom_split_names(tmp_path):
    _img(tmp_path / "training" / "0" / "a.png")
    _img(tmp_path / "testing" / "0" / "b.png")
    data, _ = ImageFolders(tmp_path, train="training", valid="testing")
    assert data.splits == {"train": [0], "valid": [1]}
    # without the split names, "training" and "testing" would be the classes
    data, (_, label) = ImageFolders(tmp_path)
    assert label.classes == ["testing", "training"] and data.splits == {}


def test_image_folders_extensions_argument(flat):
    data, _ = ImageFolders(flat, extensions=["PNG"])
    assert sorted(p.name for p in data.inputs.container) == ["b.png", "y.png"]


def test_image_folders_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match="nowhere.*does not exist"):
        ImageFolders(tmp_path / "nowhere")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(DatasetError, match="file.txt.*not a folder"):
        ImageFolders(f)


def test_image_folders_no_class_folders(tmp_path):
    _img(tmp_path / "loose.png")
    with pytest.raises(DatasetError, match="no class folders.*1 images directly"):
        ImageFolders(tmp_path)


def test_image_folders_empty_class(tmp_path):
    _img(tmp_path / "cat" / "a.png")
    (tmp_path / "dog").mkdir()
    with pytest.raises(DatasetError, match=r"dog has no images"):
        ImageFolders(tmp_path)


def test_image_folders_no_images_at_all(tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "dog").mkdir()
    (tmp_path / "dog" / "readme.txt").write_text("hi")
    with pytest.raises(DatasetError, match="no images"):
        ImageFolders(tmp_path)


def test_label_outside_classes_is_reported():
    label = Label(["cat", "dog"])
    with pytest.raises(BlockValueError, match="'cow' is not one of"):
        label.validate("cow", where="sample 3")


# --- ImageTable ----------------------------------------------------------------------------

@pytest.fixture
def table(tmp_path):
    _img(tmp_path / "imgs" / "a.png")
    _img(tmp_path / "imgs" / "b.png", color=(0, 0, 0))
    _img(tmp_path / "imgs" / "c.png")
    return tmp_path


def test_image_table_single_label(table):
    csv = table / "labels.csv"
    csv.write_text("file,label,extra\nimgs/a.png,cat,1\nimgs/b.png, dog ,2\nimgs/c.png,cat,3\n")
    data, (image, label) = ImageTable(csv, "file", "label")
    assert label == Label(["cat", "dog"]) and image == Image()
    assert list(data.targets) == ["cat", "dog", "cat"]
    assert data.inputs[1].getpixel((0, 0)) == (0, 0, 0)


def test_image_table_multi_label_and_root(table, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    csv = other / "tags.csv"
    csv.write_text('path,tags\nimgs/a.png,"sky, sea"\nimgs/b.png,\nimgs/c.png,"sea,,boat "\n')
    data, (_, label) = ImageTable(csv, "path", "tags", label_sep=",", root=table)
    assert isinstance(label, LabelMulti) and label.classes == ["boat", "sea", "sky"]
    assert list(data.targets) == [["sky", "sea"], [], ["sea", "boat"]]
    for t in data.targets:
        label.validate(t)


def test_image_table_missing_column(table):
    csv = table / "labels.csv"
    csv.write_text("file,label\nimgs/a.png,cat\n")
    with pytest.raises(DatasetError, match=r"\['tags'\].*available: \['file', 'label'\]"):
        ImageTable(csv, "file", "tags")


def test_image_table_missing_file(table):
    csv = table / "labels.csv"
    csv.write_text("file,label\nimgs/a.png,cat\nimgs/zzz.png,dog\n")
    with pytest.raises(DatasetError, match=r"row 2 .*zzz.png does not exist"):
        ImageTable(csv, "file", "label")


def test_image_table_empty(table):
    csv = table / "labels.csv"
    csv.write_text("file,label\n")
    with pytest.raises(DatasetError, match="no rows"):
        ImageTable(csv, "file", "label")
    with pytest.raises(DatasetError, match="missing.csv"):
        ImageTable(table / "missing.csv", "file", "label")


def test_image_table_excel_bom(table):
    csv = table / "bom.csv"
    csv.write_bytes("\ufefffile,label\nimgs/a.png,cat\n".encode("utf-8"))
    data, _ = ImageTable(csv, "file", "label")
    assert list(data.targets) == ["cat"]
    assert np.asarray(data.inputs[0]).shape == (5, 6, 3)
