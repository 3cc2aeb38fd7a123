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


# --- the model contract converts every pixel as training does (one implementation) --------------
def _task_and_meta(channels=None, size=(5, 7)):
    from hotstart import ImageClassificationSingle, Label
    from hotstart.export.metadata import task_metadata
    from hotstart.contract import read_metadata

    task = ImageClassificationSingle((Image(channels), Label([0, 1])), size=size, augment=False,
                                     mean=(0.1, 0.2, 0.3)[:channels or 3], std=(0.5, 0.25, 0.125)[:channels or 3])
    return task, read_metadata(task_metadata(task))


def _value_cases(tmp_path):
    """Values for which the drifted rules gave other pixels: 16-bit v >> 8 (1000 -> 3, not 4), "F"
    divided by 255, mode "I" <= 255 taken as 8-bit, and every other mode / dtype."""
    from PIL import Image as P

    rng = np.random.default_rng(0)
    sixteen = np.array([[0, 128, 1000, 1151, 32896, 65279, 65535]] * 4, np.uint16)
    sixteen[1:] = rng.integers(0, 65536, size=(3, 7))
    u8 = rng.integers(0, 256, size=(4, 7, 3), dtype=np.uint8)
    f = rng.random((4, 7)).astype(np.float32)
    cases = {
        "uint16 array": sixteen, "uint16 HxWx1": sixteen[..., None],
        "I;16 image": P.fromarray(sixteen), "I <= 255": P.fromarray(np.full((4, 7), 200, np.int32)),
        "I;16B image": P.frombytes("I;16B", (7, 4), sixteen.astype(">u2").tobytes()), "float16 array": f.astype(np.float16),
        "I 16-bit": P.fromarray(sixteen.astype(np.int32)),
        "F image": P.fromarray(f, mode="F"), "float32 array": f, "float64 RGB": f[..., None].repeat(3, -1) * 0.5,
        "int64 <= 255": u8[..., 0].astype(np.int64), "int16 RGB": u8.astype(np.int16), "bool": f > 0.5,
        "uint8 L": u8[..., 0], "uint8 RGB": u8, "uint8 RGBA": np.dstack([u8, u8[..., :1]]),
        "L": P.fromarray(u8[..., 0]), "RGB": P.fromarray(u8), "1": P.fromarray(u8[..., 0]).convert("1"),
        "P": P.fromarray(u8).convert("P"), "PA": P.fromarray(u8).convert("PA"), "LA": P.fromarray(u8).convert("LA"),
        "RGBA": P.fromarray(np.dstack([u8, u8[..., :1]]), "RGBA"), "CMYK": P.fromarray(u8).convert("CMYK"),
        "YCbCr": P.fromarray(u8).convert("YCbCr"), "HSV": P.fromarray(u8).convert("HSV"),
    }
    for name, img in [("16-bit png", P.fromarray(sixteen)), ("I tif", P.fromarray(np.full((4, 7), 200, np.int32))),
                      ("F tif", P.fromarray(f, mode="F")), ("rgba png", cases["RGBA"])]:
        path = tmp_path / (name.replace(" ", "_") + (".tif" if "tif" in name else ".png"))
        img.save(path)
        cases[name] = path
    rotated = P.fromarray(u8)
    exif = rotated.getexif()
    exif[0x0112] = 6
    rotated.save(tmp_path / "rot.jpg", exif=exif, quality=95)
    cases["exif jpeg"] = tmp_path / "rot.jpg"
    return cases


@pytest.mark.parametrize("channels", [None, 1, 3])
def test_predictor_encodes_every_mode_and_dtype_as_learner_predict(tmp_path, channels):
    """Pixel for pixel: the predictor's encoded input equals what learner.predict feeds the model
    (the task's `load_input` reads paths as predict does; `encode_input` is predict's encoding)."""
    from hotstart.contract import encode_image

    task, meta = _task_and_meta(channels)
    for name, value in _value_cases(tmp_path).items():
        want = task.encode_input(task.load_input(value)).numpy()
        got = encode_image(value, meta)
        assert got.shape == want.shape, name
        assert np.array_equal(got, want), (name, np.abs(got - want).max())


def test_predictor_refuses_the_values_that_training_refuses(tmp_path):
    """Out-of-range values are refused by both (the predictor clipped them before), naming the file."""
    from PIL import Image as P

    from hotstart.contract import ImageInputError, encode_image

    task, meta = _task_and_meta()
    P.fromarray(np.full((3, 3), 70000, np.int32)).save(tmp_path / "deep.tif")
    P.fromarray(np.full((3, 3), 200.0, np.float32), mode="F").save(tmp_path / "f.tif")
    bad = {"int64 > 255": np.array([[0, 300]]), "int16 < 0": np.array([[-1, 5]], np.int16),
           "float 0..255": np.full((2, 2), 255.0, np.float32), "nan": np.array([[np.nan, 0.5]]),
           "F > 1": P.fromarray(np.full((2, 2), 2.0, np.float32), mode="F"),
           "I > 65535": P.fromarray(np.full((2, 2), 70000, np.int32)),
           "deep.tif": tmp_path / "deep.tif", "f.tif": tmp_path / "f.tif"}
    for name, value in bad.items():
        with pytest.raises(ValueError) as learner_error:
            task.encode_input(task.load_input(value))
        with pytest.raises(ImageInputError) as predictor_error:
            encode_image(value, meta)
        if name.endswith(".tif"):
            assert name in str(predictor_error.value) and name in str(learner_error.value)
            assert isinstance(learner_error.value, ImageInputError)


def test_predictor_refuses_a_decompression_bomb_as_learner_predict_does(tmp_path, monkeypatch):
    """PIL only warns between MAX_IMAGE_PIXELS and twice it: the predictor opened such a file."""
    from PIL import Image as P

    from hotstart.datasets import ImageLoadError
    from hotstart.contract import ImageInputError, encode_image

    task, meta = _task_and_meta()
    P.new("L", (12, 10), 7).save(tmp_path / "bomb.png")
    monkeypatch.setattr(P, "MAX_IMAGE_PIXELS", 100)  # 120 pixels: within PIL's warn-only band
    with pytest.raises(ImageLoadError, match=r"bomb\.png.*decompression bomb"):
        task.load_input(tmp_path / "bomb.png")
    with pytest.raises(ImageInputError, match=r"bomb\.png.*decompression bomb"):
        encode_image(tmp_path / "bomb.png", meta)
    monkeypatch.setattr(P, "MAX_IMAGE_PIXELS", 50)  # beyond twice the limit: PIL's own error, ours too
    with pytest.raises(ImageInputError, match=r"bomb\.png.*decompression bomb"):
        encode_image(tmp_path / "bomb.png", meta)


def test_the_contract_and_the_predictor_import_nothing_else_of_hotstart_and_no_torch():
    """A bundle copies them alone (predictor.py and the contract package), and training's blocks and
    encodings import from the contract: it uses relative imports of its own files only, and no torch."""
    import ast
    from pathlib import Path

    import hotstart.contract as contract
    import hotstart.predictor as predictor_module

    files = sorted(Path(contract.__file__).parent.glob("*.py"))
    assert {f.name for f in files} >= {"schema.py", "images.py", "resize.py", "image_input.py", "table_input.py",
                                       "series_input.py", "outputs.py", "kinds.py", "model.py"}
    for path in [*files, Path(predictor_module.__file__)]:
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    target = (node.module or "").split(".")[0]
                    # the contract's files import each other (level 1); predictor.py imports `.contract`
                    assert node.level == 1 and (path.parent.name == "contract" or target == "contract"), path
                    continue
                imported.add((node.module or "").split(".")[0])
        assert imported <= {"__future__", "abc", "dataclasses", "functools", "json", "math", "numbers", "os", "re",
                            "sys", "typing", "warnings", "argparse", "csv", "io", "itertools", "pathlib", "numpy", "PIL",
                            "onnxruntime", "hotstart_contract"}, (path.name, imported)
