"""Data for dense and keypoint tasks: the built-in recipes, SegmentationFolders, KeypointTable."""
import numpy as np
import pytest
from PIL import Image as PILImage

from hotstart import datasets
from hotstart.datasets import DatasetError


def test_digits_segmentation_labels_strokes_with_the_digit():
    data, (image, mask) = datasets.load("digits-segmentation")
    digits, _ = datasets.load("digits")
    assert len(data[0]) == 1797 and mask.classes[0] == "background" and len(mask.classes) == 11
    for i in (0, 5, 1000):
        img, m = np.asarray(data[0][i]), data[1][i]
        assert img.shape == m.shape == (32, 32) and image.check(data[0][i]) and mask.check(m)
        assert set(np.unique(m)) == {0, digits[1][i] + 1}
        assert ((img >= 128) == (m > 0)).all()


@pytest.mark.parametrize("name,kw", [("shapes", {"n": 20}), ("discs", {"n": 20, "points": 2})])
def test_generated_sets_are_deterministic_and_valid(name, kw):
    (a, blocks), (b, _) = datasets.load(name, **kw), datasets.load(name, **kw)
    c, _ = datasets.load(name, seed=1, **kw)
    for i in range(20):
        assert blocks[0].check(a[0][i]) and blocks[1].check(a[1][i])
        assert np.array_equal(np.asarray(a[0][i]), np.asarray(b[0][i])) and np.array_equal(a[1][i], b[1][i])
    assert any(not np.array_equal(a[1][i], c[1][i]) for i in range(20))


def test_discs_points_are_at_the_disc_centres():
    data, _ = datasets.load("discs", n=30, points=1)
    for i in range(30):
        img = np.asarray(data[0][i], dtype=np.float64)
        bright = img > 150
        ys, xs = np.nonzero(bright)
        centre = np.array([xs.mean(), ys.mean()])
        assert np.linalg.norm(centre - data[1][i][0]) < 0.75


def _png(path, arr, mode="L"):
    PILImage.fromarray(np.asarray(arr, np.uint8), mode=mode).save(path)


def test_segmentation_folders_pairs_by_stem(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "lbl").mkdir()
    for stem in ("b", "a", "c"):
        _png(tmp_path / "img" / f"{stem}.png", np.full((6, 5), ord(stem)))
        _png(tmp_path / "lbl" / f"{stem}.png", np.full((6, 5), ord(stem) - ord("a")))
    data, (image, mask) = datasets.SegmentationFolders(tmp_path / "img", tmp_path / "lbl", ["x", "y", "z"])
    assert [int(np.asarray(data[0][i])[0, 0]) for i in range(3)] == [ord("a"), ord("b"), ord("c")]
    assert [int(data[1][i][0, 0]) for i in range(3)] == [0, 1, 2]
    assert mask.classes == ["x", "y", "z"] and data[1][0].dtype == np.uint8


def test_segmentation_folders_lists_unpaired_files(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "lbl").mkdir()
    for stem in ("a", "b", "lonely_image"):
        _png(tmp_path / "img" / f"{stem}.png", np.zeros((4, 4)))
    for stem in ("a", "b", "lonely_mask"):
        _png(tmp_path / "lbl" / f"{stem}.png", np.zeros((4, 4)))
    with pytest.raises(DatasetError) as err:
        datasets.SegmentationFolders(tmp_path / "img", tmp_path / "lbl", ["bg"])
    msg = str(err.value)
    assert "1 image(s)" in msg and "lonely_image.png" in msg and "1 mask(s)" in msg and "lonely_mask.png" in msg
    assert "a.png" not in msg.replace("lonely_", "")


def test_keypoint_table_reads_points_and_names_bad_rows(tmp_path):
    for name in ("p.png", "q.png"):
        _png(tmp_path / name, np.zeros((8, 8)))
    (tmp_path / "ok.csv").write_text("file,x0,y0,x1,y1\np.png,1,2,3,4\nq.png,5.5,6,7,0\n")
    data, (image, points) = datasets.KeypointTable(tmp_path / "ok.csv", "file", ["x0", "y0", "x1", "y1"])
    assert points.n == 2 and np.array_equal(data[1][1], np.array([[5.5, 6], [7, 0]], np.float32))
    assert np.asarray(data[0][0]).shape == (8, 8)
    (tmp_path / "bad.csv").write_text("file,x0,y0\np.png,1,2\nq.png,abc,2\n")
    with pytest.raises(DatasetError, match="row 2.*'x0'.*abc"):
        datasets.KeypointTable(tmp_path / "bad.csv", "file", ["x0", "y0"])
    (tmp_path / "empty.csv").write_text("file,x0,y0\np.png,,2\n")
    with pytest.raises(DatasetError, match="row 1.*'x0'"):
        datasets.KeypointTable(tmp_path / "empty.csv", "file", ["x0", "y0"])
    (tmp_path / "nan.csv").write_text("file,x0,y0\np.png,nan,2\n")
    with pytest.raises(DatasetError, match="row 1.*not a finite"):
        datasets.KeypointTable(tmp_path / "nan.csv", "file", ["x0", "y0"])
    (tmp_path / "huge.csv").write_text("file,x0,y0\np.png,1,2\nq.png,3,1e308\n")  # inf once float32
    with pytest.raises(DatasetError, match=r"huge\.csv row 2 \(line 3\): column 'y0' holds '1e308', beyond float32"):
        datasets.KeypointTable(tmp_path / "huge.csv", "file", ["x0", "y0"])
    (tmp_path / "missing.csv").write_text("file,x0,y0\nnope.png,1,2\n")
    with pytest.raises(DatasetError, match="row 1.*nope.png"):
        datasets.KeypointTable(tmp_path / "missing.csv", "file", ["x0", "y0"])
    with pytest.raises(DatasetError, match="no column"):
        datasets.KeypointTable(tmp_path / "ok.csv", "file", ["x9", "y9"])
