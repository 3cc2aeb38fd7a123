"""The built-in ``digits`` dataset: 1,797 handwritten digits, 8x8 grayscale, 10 classes.

Source: "Optical Recognition of Handwritten Digits", UCI Machine Learning Repository
(E. Alpaydin and C. Kaynak, 1998), https://doi.org/10.24432/C50P49; the same 1,797-image
test-set version that scikit-learn ships as ``sklearn.datasets.load_digits``.
License: CC BY 4.0 (attribution: Alpaydin & Kaynak, UCI ML Repository).

It ships inside the package (``data/digits.npz``, ~46 KB) so the first example, the tests and
the warmup run with no network. Pixel values are the original 0..16 counts scaled to 0..255
(``(v * 255 + 8) // 16``). Regenerate the file with ``python scripts/make_digits.py`` (needs
scikit-learn, which hotstart itself does not depend on).

    >>> from hotstart import datasets
    >>> data, (image, label) = datasets.load("digits")
    >>> data.inputs[0].size, data.targets[0]
    ((8, 8), 0)
"""
from __future__ import annotations

from pathlib import Path

from ..blocks import Image, Label
from .containers import Data, Samples
from .errors import DatasetError

__all__ = ["load_digits", "DIGITS_FILE", "DIGITS_CONTENT_SHA256"]

DIGITS_FILE = Path(__file__).parent / "data" / "digits.npz"
# sha256 of images.tobytes() + targets.tobytes(), as printed by scripts/make_digits.py; the tests
# pin it, so a regenerated file must hold exactly the same data.
DIGITS_CONTENT_SHA256 = "a19cb3d96bba7deace8ee5a513a6eb7bad0403d528f00bf4d351b6a7a55baa91"


def load_digits():
    """``(Data(inputs, targets), (Image(channels=1), Label([0, ..., 9])))``.

    Inputs are 8x8 mode-"L" PIL images built when read; targets are Python ints 0..9.
    """
    import numpy as np

    if not DIGITS_FILE.is_file():
        raise DatasetError(f"digits: {DIGITS_FILE} is missing from the installed package; "
                           "regenerate it with scripts/make_digits.py")
    with np.load(DIGITS_FILE, allow_pickle=False) as npz:  # never unpickle a data file
        images, targets = npz["images"], npz["targets"]
    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (8, 8) \
            or targets.shape != (len(images),):
        raise DatasetError(f"digits: {DIGITS_FILE} does not hold uint8 images (N, 8, 8) and N targets "
                           f"(got {images.dtype} {images.shape} and {targets.shape})")

    def image(i: int):
        from PIL import Image as PILImage

        return PILImage.fromarray(images[i])  # uint8 2-D -> mode "L"

    image.__name__ = "digits_image"
    return Data(Samples(len(images), image), [int(t) for t in targets]), \
        (Image(channels=1), Label(list(range(10))))
