"""Regenerate ``hotstart/datasets/data/penguins.csv`` from the ``palmerpenguins`` wheel on PyPI.

    pip download --no-deps palmerpenguins==0.1.6 -d /tmp/pp
    python scripts/make_penguins.py /tmp/pp/palmerpenguins-0.1.6-py3-none-any.whl

The wheel is only opened as a zip (nothing in it is imported or run); the file copied is its
``palmerpenguins/data/penguins.csv``: the 344-row "penguins" table (not ``penguins_raw``) of
Horst, Hill and Gorman's palmerpenguins R package. Data by Dr. Kristen Gorman and the Palmer
Station LTER, released under CC0 (the wheel's METADATA says so; its LICENSE, MIT, covers the
package's Python code, which we do not copy). Cite: Gorman KB, Williams TD, Fraser WR (2014),
PLoS ONE 9(3): e90081, https://doi.org/10.1371/journal.pone.0090081.

The bytes are copied unchanged and checked against the sha256 the tests pin
(``PENGUINS_SHA256`` in hotstart/datasets/penguins.py); the file is written atomically.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "hotstart" / "datasets" / "data" / "penguins.csv"
MEMBER = "palmerpenguins/data/penguins.csv"
COLUMNS = ["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex", "year"]


def extract(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        if MEMBER not in names:
            raise SystemExit(f"{wheel}: no {MEMBER} inside (members: {names})")
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if meta is None or "CC-0" not in zf.read(meta).decode("utf-8", "replace"):
            raise SystemExit(f"{wheel}: its METADATA does not state the CC-0 license of the data; check by hand")
        data = zf.read(MEMBER)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    if rows[0] != COLUMNS or len(rows) != 345:
        raise SystemExit(f"{wheel}: unexpected table: header {rows[0]}, {len(rows) - 1} rows (expected 344)")
    return data


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="palmerpenguins-*.whl (pip download --no-deps palmerpenguins)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output file (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from hotstart.atomic import atomic_write_bytes
    from hotstart.datasets.penguins import PENGUINS_SHA256

    data = extract(args.wheel)
    digest = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(args.out, data)
    print(f"wrote {args.out}: {len(data)} bytes, 344 rows, sha256 {digest}")
    if digest != PENGUINS_SHA256:
        print(f"warning: sha256 differs from the pinned PENGUINS_SHA256 {PENGUINS_SHA256}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
