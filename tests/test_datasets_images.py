"""`load_image`: modes are converted, EXIF is applied, and every bad file names itself."""
import io
import os

import numpy as np
import PIL.Image
import pytest
from PIL import Image as PILImage

from hotstart.datasets import ImageLoadError, load_image


def _save(img, path, **kw):
    img.save(path, **kw)
    return path


@pytest.fixture
def rgb():
    rng = np.random.default_rng(0)
    return PILImage.fromarray(rng.integers(0, 256, (20, 30, 3), dtype=np.uint8))


def test_rgb_and_grayscale_pass_through(tmp_path, rgb):
    img = load_image(_save(rgb, tmp_path / "a.png"))
    assert img.mode == "RGB" and img.size == (30, 20)
    assert np.array_equal(np.asarray(img), np.asarray(rgb))
    gray = load_image(_save(rgb.convert("L"), tmp_path / "g.png"))
    assert gray.mode == "L" and gray.size == (30, 20)


@pytest.mark.parametrize("mode, ext, expected", [
    ("RGBA", ".png", "RGB"),
    ("LA", ".png", "L"),
    ("P", ".png", "RGB"),
    ("P", ".gif", "RGB"),
    ("I;16", ".png", "L"),
    ("CMYK", ".jpg", "RGB"),
    ("1", ".bmp", "L"),
])
def test_modes_are_converted(tmp_path, rgb, mode, ext, expected):
    if mode == "I;16":
        src = PILImage.fromarray((np.arange(600, dtype=np.uint16).reshape(20, 30) * 100))
        assert src.mode.startswith("I;16")
    elif mode == "LA":
        src = rgb.convert("LA")
    else:
        src = rgb.convert(mode)
    path = _save(src, tmp_path / f"x{ext}")
    img = load_image(path)
    assert img.mode == expected and img.size == (30, 20)


def test_transparent_pixels_become_white(tmp_path):
    src = PILImage.new("RGBA", (4, 4), (255, 0, 0, 0))
    img = load_image(_save(src, tmp_path / "t.png"))
    assert img.getpixel((0, 0)) == (255, 255, 255)


def test_sixteen_bit_is_scaled_not_clipped(tmp_path):
    src = PILImage.fromarray(np.full((4, 4), 65535, dtype=np.uint16))
    img = load_image(_save(src, tmp_path / "w.png"))
    assert img.mode == "L" and img.getpixel((0, 0)) == 255


def test_exif_orientation_is_applied(tmp_path):
    src = PILImage.new("RGB", (40, 20), (10, 20, 30))
    exif = PILImage.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    path = _save(src, tmp_path / "phone.jpg", exif=exif)
    with PILImage.open(path) as raw:
        assert raw.size == (40, 20)
    img = load_image(path)
    assert img.size == (20, 40)  # width and height swapped


def test_image_is_fully_loaded_and_detached(tmp_path, rgb):
    path = _save(rgb, tmp_path / "a.jpg")
    img = load_image(path)
    path.unlink()  # the returned image must not need the file any more
    assert np.asarray(img).shape == (20, 30, 3)


@pytest.mark.parametrize("name", ["corrupt.png", "corrupt.jpg"])
def test_corrupt_bytes(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(ImageLoadError, match=name):
        load_image(path)


def test_text_file_with_image_extension(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("this is not an image\n")
    with pytest.raises(ImageLoadError, match="notes.jpg") as info:
        load_image(path)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("fmt, ext", [("JPEG", ".jpg"), ("PNG", ".png")])
def test_truncated_file(tmp_path, rgb, fmt, ext):
    big = rgb.resize((200, 200))
    buf = io.BytesIO()
    big.save(buf, format=fmt)
    data = buf.getvalue()
    path = tmp_path / f"cut{ext}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageLoadError, match=f"cut{ext}"):
        load_image(path)
    assert PIL.ImageFile.LOAD_TRUNCATED_IMAGES is False  # we never flip PIL's global switch


def test_decompression_bomb(tmp_path, monkeypatch):
    path = _save(PILImage.new("L", (64, 64)), tmp_path / "bomb.png")
    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.raises(ImageLoadError, match="bomb.png.*decompression bomb"):
        load_image(path)
    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", 4000)  # 6,400 px: PIL only warns (< 2x)
    with pytest.raises(ImageLoadError, match="bomb.png"):
        load_image(_save(PILImage.new("L", (64, 100)), tmp_path / "bomb.png"))


def test_bomb_check_leaves_warning_filters_alone(tmp_path):
    import warnings

    before = list(warnings.filters)
    load_image(_save(PILImage.new("L", (8, 8)), tmp_path / "ok.png"))
    assert warnings.filters == before


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.png"):
        load_image(tmp_path / "nope.png")


# --- a skipped folder link's warning names the user's line, not one inside hotstart ---------

@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")
@pytest.mark.parametrize("recipe", ["list_images", "ImageFolders", "SegmentationFolders"])
def test_a_skipped_link_warning_names_the_callers_file(tmp_path, recipe):
    """Before, list_images' warning named a line of hotstart/datasets (the walk now wraps the
    contract's, one frame deeper), and ImageFolders' and SegmentationFolders' did too."""
    import warnings

    from hotstart.datasets import ImageFolders, SegmentationFolders, list_images

    for cls in ("cat", "dog"):
        (tmp_path / "root" / cls).mkdir(parents=True)
        PILImage.new("RGB", (4, 4)).save(tmp_path / "root" / cls / "a.png")
    os.symlink("..", tmp_path / "root" / "cat" / "up")
    masks = tmp_path / "masks"
    masks.mkdir()
    PILImage.fromarray(np.zeros((4, 4), np.uint8)).save(masks / "a.png")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if recipe == "list_images":
            list_images(tmp_path / "root")
        elif recipe == "ImageFolders":
            ImageFolders(tmp_path / "root")
        else:
            SegmentationFolders(tmp_path / "root" / "cat", masks, ["bg", "fg"])
    skipped = [w for w in caught if "is a folder link that is not followed" in str(w.message)]
    assert skipped and all(w.filename == __file__ for w in skipped), [(w.filename, w.lineno) for w in skipped]
