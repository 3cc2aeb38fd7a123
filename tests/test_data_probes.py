"""Issue 9, item 23: probes of every place that reads user files. Each bad file a camera, an editor
or a scraper leaves behind either works (an "L" or "RGB" image of the right size) or raises an
error that names the file; folder trees with links either work or name the link."""
import io
import os
import re
import struct
import time
import zlib

import numpy as np
import pytest
from PIL import Image as PILImage

from hotstart.datasets import DatasetError, ImageFolders, ImageLoadError, list_images, load_image


def _encoded(img, fmt, **kw):
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def _rgb(w=12, h=8, seed=0):
    return PILImage.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8))


def _png_header_only(width, height):
    """A PNG that declares width x height pixels and holds none: a decompression bomb's header."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def _exif_rotated():
    exif = PILImage.Exif()
    exif[0x0112] = 6  # rotate 90 degrees to display
    return _encoded(_rgb(12, 8), "JPEG", exif=exif)


def _palette_with_transparency():
    img = PILImage.new("P", (12, 8), 0)
    img.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)
    img.paste(1, (0, 0, 6, 8))
    return _encoded(img, "PNG", transparency=0)  # index 0 (red) is transparent


def _animated_gif():
    frames = [PILImage.new("P", (12, 8), i) for i in range(3)]
    return _encoded(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)


# name -> (file bytes, expected mode and size (w, h) or an error pattern)
WORKS = {
    "cmyk.jpg": (lambda: _encoded(_rgb().convert("CMYK"), "JPEG"), ("RGB", (12, 8))),
    "palette_transparent.png": (_palette_with_transparency, ("RGB", (12, 8))),
    "sixteen_bit.png": (lambda: _encoded(PILImage.fromarray(np.full((8, 12), 40000, np.uint16)), "PNG"),
                        ("L", (12, 8))),
    "exif_rotated.jpg": (_exif_rotated, ("RGB", (8, 12))),
    "animated.gif": (_animated_gif, ("RGB", (12, 8))),
    "la.png": (lambda: _encoded(_rgb().convert("LA"), "PNG"), ("L", (12, 8))),
    "rgba.png": (lambda: _encoded(_rgb().convert("RGBA"), "PNG"), ("RGB", (12, 8))),
    "mode_i.tif": (lambda: _encoded(PILImage.fromarray(np.full((8, 12), 65535, np.int32)), "TIFF"), ("L", (12, 8))),
    "mode_f.tif": (lambda: _encoded(PILImage.fromarray(np.full((8, 12), 0.5, np.float32), "F"), "TIFF"),
                   ("L", (12, 8))),
    "png_named.jpg": (lambda: _encoded(_rgb(), "PNG"), ("RGB", (12, 8))),
    "one_bit.bmp": (lambda: _encoded(_rgb().convert("1"), "BMP"), ("L", (12, 8))),
}
FAILS = {
    "truncated.jpg": (lambda: _encoded(_rgb(64, 64), "JPEG")[:300], "truncated|cannot load"),
    "truncated.png": (lambda: _encoded(_rgb(64, 64), "PNG")[:200], "truncated|cannot load"),
    "zero_bytes.jpg": (lambda: b"", "not an image file"),
    "saved_page.jpg": (lambda: b"<!DOCTYPE html><html><body>403 Forbidden</body></html>", "not an image file"),
    "notes.png": (lambda: b"just some text\n", "not an image file"),
    "bomb.png": (lambda: _png_header_only(100_000, 100_000), "decompression bomb"),
    "mode_i_32bit.tif": (lambda: _encoded(PILImage.fromarray(np.full((8, 12), 100_000, np.int32)), "TIFF"),
                         r"0\.\.65535"),
    "mode_f_0_255.tif": (lambda: _encoded(PILImage.fromarray(np.full((8, 12), 128.0, np.float32), "F"), "TIFF"),
                         r"\[0, 1\]"),
}


@pytest.fixture(scope="module")
def probe_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("probes")
    for name, (make, _) in {**WORKS, **FAILS}.items():
        (root / "cls").mkdir(exist_ok=True)
        (root / "cls" / name).write_bytes(make())
    (root / "other").mkdir()
    _rgb().save(root / "other" / "fine.png")
    return root


@pytest.fixture(scope="module")
def probe_data(probe_folder):
    data, _ = ImageFolders(probe_folder)
    return {p.name: i for i, p in enumerate(data.inputs.container)}, data


@pytest.mark.parametrize("name", sorted(WORKS))
def test_odd_but_valid_files_work(probe_data, name):
    index, data = probe_data
    img = data.inputs[index[name]]
    mode, size = WORKS[name][1]
    assert (img.mode, img.size) == (mode, size)


@pytest.mark.parametrize("name", sorted(FAILS))
def test_bad_files_name_themselves(probe_data, name):
    index, data = probe_data
    start = time.perf_counter()
    with pytest.raises(ImageLoadError) as err:
        data.inputs[index[name]]
    message = str(err.value)
    assert message.startswith(str(data.inputs.container[index[name]])) and name in message
    assert re.search(FAILS[name][1], message), message
    assert time.perf_counter() - start < 2.0  # a bomb is refused from its header, not decoded


def test_converted_values(probe_folder):
    sixteen = np.asarray(load_image(probe_folder / "cls" / "sixteen_bit.png"))
    assert int(sixteen[0, 0]) == round(40000 * 255 / 65535)
    pal = load_image(probe_folder / "cls" / "palette_transparent.png")
    assert pal.getpixel((0, 0)) == (0, 0, 255) and pal.getpixel((11, 0)) == (255, 255, 255)
    assert np.asarray(load_image(probe_folder / "cls" / "mode_f.tif"))[0, 0] == 128


# --- folder trees with links ---------------------------------------------------------------

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")


@needs_symlinks
def test_link_loop_ends_and_each_image_counts_once(tmp_path):
    (tmp_path / "root" / "cat" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "dog").mkdir()
    _rgb().save(tmp_path / "root" / "cat" / "sub" / "1.png")
    _rgb().save(tmp_path / "root" / "dog" / "2.png")
    os.symlink(tmp_path / "root" / "cat", tmp_path / "root" / "cat" / "sub" / "loop")  # cat/sub/loop -> cat
    with pytest.warns(UserWarning, match=r"cat/sub/loop is a folder link that is not followed: it points back up"):
        data, (_, label) = ImageFolders(tmp_path / "root")
    assert label.classes == ["cat", "dog"] and list(data.targets) == ["cat", "dog"]


@needs_symlinks
def test_links_to_files_and_folders_outside_the_root_are_followed(tmp_path):
    """Before: a linked folder inside a class folder was skipped without a word."""
    store = tmp_path / "store"
    (store / "more").mkdir(parents=True)
    _rgb(seed=1).save(store / "x.png")
    _rgb(seed=2).save(store / "more" / "y.png")
    root = tmp_path / "root"
    (root / "cat").mkdir(parents=True)
    os.symlink(store / "x.png", root / "cat" / "x.png")
    os.symlink(store / "more", root / "cat" / "more")
    os.symlink(store / "more", root / "dog")  # a whole class folder that is a link
    data, (_, label) = ImageFolders(root)
    assert label.classes == ["cat", "dog"]
    assert sorted(p.name for p in data.inputs.container) == ["x.png", "y.png", "y.png"]
    assert all(data.inputs[i].size == (12, 8) for i in range(3))


def _two_classes(tmp_path):
    root = tmp_path / "root"
    for cls, n in (("cat", 1), ("dog", 2)):
        (root / cls).mkdir(parents=True)
        for i in range(n):
            _rgb(seed=i).save(root / cls / f"{cls}{i}.png")
    return root


@needs_symlinks
@pytest.mark.parametrize("link,target", [
    ("cat/up", ".."),               # back up to the root: every dog would be a cat too
    ("cat/sub/up", "../.."),        # the same from deeper down
    ("cat/all", "../.."),           # above the root
    ("cat/dogs", "../dog"),         # into another class's folder: the dogs counted twice
    ("loop", "."),                  # a class made of the whole tree
    ("parent", ".."),               # a class made of the tree's parent
    ("alias", "cat"),               # a class that is another class again
])
def test_links_back_up_the_tree_or_into_another_class_are_not_followed(tmp_path, link, target):
    """Before: cat/up -> .. labelled the dog images as cats as well; root/loop -> . became a class."""
    root = _two_classes(tmp_path)
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, root / link)
    with pytest.warns(UserWarning, match=rf"{re.escape(link)} is a folder link that is not followed"):
        data, (_, label) = ImageFolders(root)
    assert label.classes == ["cat", "dog"]
    assert sorted(zip(data.targets, (p.name for p in data.inputs.container))) == \
        [("cat", "cat0.png"), ("dog", "dog0.png"), ("dog", "dog1.png")]


@needs_symlinks
def test_split_folder_links_into_the_dataset_are_not_followed(tmp_path):
    root = tmp_path / "root"
    for split in ("train", "valid"):
        (root / split / "cat").mkdir(parents=True)
        (root / split / "dog").mkdir(parents=True)
        for cls in ("cat", "dog"):
            _rgb().save(root / split / cls / f"{split}-{cls}.png")
    os.symlink("train", root / "test")  # the training images again, as a test split
    with pytest.warns(UserWarning, match=r"test is a folder link that is not followed"):
        data, _ = ImageFolders(root)
    assert sorted(data.splits) == ["train", "valid"] and len(data.inputs) == 4


@needs_symlinks
def test_segmentation_folders_follow_no_link_back_up(tmp_path):
    from hotstart.datasets import SegmentationFolders

    images, masks = tmp_path / "images", tmp_path / "masks"
    images.mkdir()
    masks.mkdir()
    _rgb().save(images / "a.png")
    PILImage.fromarray(np.zeros((8, 12), np.uint8)).save(masks / "a.png")
    os.symlink("..", images / "up")  # before: the masks were listed as images too ("up/masks/a")
    with pytest.warns(UserWarning, match=r"images/up is a folder link that is not followed"):
        data, _ = SegmentationFolders(images, masks, ["bg", "fg"])
    assert len(data.inputs) == 1
    with pytest.warns(UserWarning, match="not followed"):
        assert [p.name for p in list_images(images)] == ["a.png"]


@needs_symlinks
def test_broken_link_is_an_error_naming_it(tmp_path):
    """Before: listed, then a FileNotFoundError deep in a DataLoader worker at training time."""
    root = tmp_path / "root"
    (root / "cat").mkdir(parents=True)
    _rgb().save(root / "cat" / "ok.png")
    os.symlink(tmp_path / "gone.png", root / "cat" / "dangling.png")
    with pytest.raises(DatasetError, match=r"cat/dangling\.png is a broken link .*gone\.png"):
        ImageFolders(root)
    with pytest.raises(DatasetError, match="dangling"):
        list_images(root)
