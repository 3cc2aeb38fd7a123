"""Issue 9, item 5: one fixed rule per pixel dtype / mode; never a per-image range, never a clip.

The rules are in `hotstart.blocks.image`'s docstring; each test here pins one row of that table.
"""
import numpy as np
import pytest
import torch
from PIL import Image as PILImage

from hotstart.blocks import BlockValueError, Image
from hotstart.datasets import ImageFolders, ImageLoadError, load_image
from hotstart.encodings import ImagePreprocessing, ProjectiveTransforms


def _gray(img):
    return np.asarray(Image().to_pil(img)).astype(int)


def test_uint8_is_taken_as_is():
    arr = np.arange(256, dtype=np.uint8).reshape(16, 16)
    assert np.array_equal(_gray(arr), arr)
    assert np.array_equal(_gray(torch.from_numpy(arr)[None]), arr)


def test_uint16_array_is_scaled_by_the_fixed_16_bit_range():
    arr = np.array([[0, 128, 257, 1000], [32767, 32896, 65279, 65535]], dtype=np.uint16)
    expected = np.round(arr.astype(float) * 255 / 65535).astype(int)
    assert np.array_equal(_gray(arr), expected)
    assert expected.tolist() == [[0, 0, 1, 4], [127, 128, 254, 255]]


def test_two_16_bit_files_of_one_folder_are_scaled_alike(tmp_path):
    """A dark and a bright 16-bit image: the same stored value gives the same 8-bit value."""
    dark = np.full((4, 4), 1000, np.uint16)
    bright = dark.copy()
    bright[0, 0] = 65535
    for cls, arr in (("a", dark), ("b", bright)):
        (tmp_path / cls).mkdir()
        PILImage.fromarray(arr).save(tmp_path / cls / "x.png")  # 16-bit PNG: mode "I;16"
    data, _ = ImageFolders(tmp_path)
    a, b = (np.asarray(data.inputs[i]) for i in range(2))
    assert a[1, 1] == b[1, 1] == 4 and b[0, 0] == 255


def test_mode_I_is_16_bit_data_by_a_fixed_range(tmp_path):
    """32-bit integer TIFFs (mode "I"): 0..65535 scaled like uint16, whatever the image's own max.

    Before the fix a mode "I" image whose maximum was <= 255 was taken as 8-bit and one with a
    larger maximum as 16-bit: two images of one folder were scaled differently."""
    small = np.full((3, 3), 200, np.int32)
    big = small.copy()
    big[0, 0] = 60000
    paths = []
    for name, arr in (("small", small), ("big", big)):
        PILImage.fromarray(arr).save(tmp_path / f"{name}.tif")
        with PILImage.open(tmp_path / f"{name}.tif") as check:
            assert check.mode == "I"
        paths.append(tmp_path / f"{name}.tif")
    s, b = (np.asarray(load_image(p)).astype(int) for p in paths)
    assert s[1, 1] == b[1, 1] == round(200 * 255 / 65535) == 1
    assert b[0, 0] == round(60000 * 255 / 65535)


def test_mode_I_outside_16_bits_is_an_error_naming_the_file(tmp_path):
    PILImage.fromarray(np.full((3, 3), 70000, np.int32)).save(tmp_path / "deep.tif")
    with pytest.raises(ImageLoadError, match=r"deep\.tif.*70000\.\.70000.*0\.\.65535"):
        load_image(tmp_path / "deep.tif")
    negative = PILImage.fromarray(np.full((3, 3), -5, np.int32))
    assert not Image().check(negative)


def test_float_in_unit_range_is_scaled_by_255():
    arr = np.array([[0.0, 0.5, 1.0]], np.float32)
    assert _gray(arr).tolist() == [[0, 128, 255]]
    assert _gray(PILImage.fromarray(arr, mode="F")).tolist() == [[0, 128, 255]]


@pytest.mark.parametrize("value", [
    np.full((2, 2), 255.0, np.float32),
    np.array([[0.0, 1.5]], np.float64),
    np.array([[-0.25, 0.5]], np.float32),
    torch.full((3, 2, 2), 2.0),
])
def test_float_outside_unit_range_is_an_error_naming_the_range(value):
    """Before: float 0..255 data was clipped at 1.0, an all-white image, without a word."""
    block = Image()
    assert not block.check(value)
    with pytest.raises(BlockValueError, match=r"values in \[.*\]; float images must lie in \[0, 1\]"):
        block.to_pil(value, where="sample 3")


def test_float_mode_F_outside_unit_range_is_an_error_naming_the_file(tmp_path):
    PILImage.fromarray(np.full((3, 3), 200.0, np.float32), mode="F").save(tmp_path / "f.tif")
    with pytest.raises(ImageLoadError, match=r"f\.tif.*\[200, 200\].*\[0, 1\]"):
        load_image(tmp_path / "f.tif")


def test_other_integer_dtypes_are_8_bit_values_or_an_error():
    ok = np.array([[0, 7, 255]], np.int64)  # what np.array([[0, 7, 255]]) makes
    assert _gray(ok).tolist() == [[0, 7, 255]]
    assert _gray(ok.astype(np.int16)).tolist() == [[0, 7, 255]]
    assert _gray(torch.from_numpy(ok.astype(np.int32))[None]).tolist() == [[0, 7, 255]]
    for bad in (np.array([[0, 300]], np.int64), np.array([[-1, 3]], np.int8), np.array([[0, 70000]], np.uint32)):
        assert not Image().check(bad)
        with pytest.raises(BlockValueError, match=r"8-bit data, which must lie in 0\.\.255"):
            Image().to_pil(bad)  # before: clipped at 255 (or wrapped) without a word


def test_bool_is_black_and_white():
    assert _gray(np.array([[False, True]])).tolist() == [[0, 255]]


def test_encodings_apply_the_same_rules():
    """ImagePreprocessing and ProjectiveTransforms take arrays and tensors through the rules too."""
    pre = ImagePreprocessing(mean=(0.0,), std=(1.0,), channels=1)
    block = Image(channels=1)
    x = pre.encode(block, np.full((2, 2), 65535, np.uint16), "validation")
    assert torch.allclose(x, torch.ones(1, 2, 2))
    x = pre.encode(block, torch.full((1, 2, 2), 0.25), "validation")
    assert torch.allclose(x, torch.full((1, 2, 2), 0.25))  # float tensors keep their precision
    x = pre.encode(block, torch.full((1, 2, 2), 51, dtype=torch.int64), "validation")
    assert torch.allclose(x, torch.full((1, 2, 2), 0.2))  # int tensor = 8-bit values, not 51.0
    with pytest.raises(BlockValueError, match=r"\[0, 255\]|\[255, 255\]"):
        pre.encode(block, torch.full((1, 2, 2), 255.0), "validation")
    pt = ProjectiveTransforms((4, 4), augment=False)
    with pytest.raises(BlockValueError, match="float images must lie in"):
        pt.encode(block, np.full((4, 4), 255.0, np.float32), "validation")
    out = pt.encode(block, np.full((4, 4), 65535, np.uint16), "validation")
    assert out.dtype == torch.uint8 and int(out.min()) == 255
