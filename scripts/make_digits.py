"""Regenerate ``hotstart/datasets/data/digits.npz`` from scikit-learn's copy of UCI digits.

    python -m venv /tmp/skvenv && /tmp/skvenv/bin/pip install scikit-learn
    /tmp/skvenv/bin/python scripts/make_digits.py            # writes the file, prints its sha256

hotstart does not depend on scikit-learn (nor scipy, which it pulls in); only this script does.
The data: "Optical Recognition of Handwritten Digits", UCI ML Repository, E. Alpaydin and
C. Kaynak (1998), CC BY 4.0; 1,797 images of 8x8 pixels with values 0..16, 10 classes.

The file is written byte-for-byte reproducibly (fixed zip timestamps, fixed member order), so
the printed sha256 only changes when the data does; and atomically (temp file, then rename).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "hotstart" / "datasets" / "data" / "digits.npz"


def digits_arrays():
    """(images uint8 (1797, 8, 8) in 0..255, targets uint8 (1797,)) from scikit-learn."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("make_digits.py needs scikit-learn; install it in a separate venv "
                         "(see this script's docstring), not in hotstart's") from None

    d = load_digits()
    raw = np.asarray(d.images)
    if raw.shape != (1797, 8, 8) or raw.min() < 0 or raw.max() > 16 or not np.all(raw == np.round(raw)):
        raise SystemExit(f"unexpected digits data from scikit-learn: shape {raw.shape}, "
                         f"range {raw.min()}..{raw.max()}")
    images = ((raw.astype(np.int64) * 255 + 8) // 16).astype(np.uint8)  # 0..16 -> 0..255, rounded
    targets = np.asarray(d.target).astype(np.uint8)
    return images, targets


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> str:
    """Write an .npz (a zip of .npy files, as numpy.savez_compressed does) reproducibly and atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, arr in arrays.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                with zf.open(info, "w") as member:
                    np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a package data file is world-readable
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output file (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    images, targets = digits_arrays()
    digest = write_npz(args.out, {"images": images, "targets": targets})
    content = hashlib.sha256(images.tobytes() + targets.tobytes()).hexdigest()
    print(f"wrote {args.out}: images {images.shape} {images.dtype}, targets {targets.shape} {targets.dtype}, "
          f"class counts {np.bincount(targets).tolist()}")
    print(f"file sha256:    {digest}")
    print(f"content sha256: {content}  (sha256 of images.tobytes() + targets.tobytes())")


if __name__ == "__main__":
    main()
