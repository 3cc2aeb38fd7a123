"""Regenerate ``hotstart/datasets/data/timeseries/*.ts`` from the ``aeon`` 1.6.0 wheel on PyPI.

    pip download aeon==1.6.0 --no-deps -d /tmp/aeon
    python scripts/make_timeseries.py /tmp/aeon/aeon-1.6.0-py3-none-any.whl

The wheel is only opened as a zip (nothing in it is imported or run; aeon is not a dependency of
hotstart). For each built-in set (`SERIES_SETS` in hotstart/datasets/timeseries_builtin.py) the
members ``aeon/datasets/data/<Name>/<Name>_TRAIN.ts`` and ``..._TEST.ts`` are copied byte for byte,
checked against the pinned sha256, and written atomically. The data is the UCR / UEA / TSER
archives' (see that module for the citations); aeon's BSD-3 license covers its code, not copied.
Ten files, 2.3 MB in all: small enough to ship, so the built-in sets need no network.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="aeon-1.6.0-py3-none-any.whl (pip download aeon==1.6.0 --no-deps)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the package's data/timeseries)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from hotstart.atomic import atomic_write_bytes
    from hotstart.datasets.timeseries_builtin import SERIES_DIR, SERIES_SETS

    out = args.out or SERIES_DIR
    bad = 0
    with zipfile.ZipFile(args.wheel) as zf:
        names = set(zf.namelist())
        for s in SERIES_SETS.values():
            for split, pinned in (("TRAIN", s.train_sha256), ("TEST", s.test_sha256)):
                member = f"aeon/datasets/data/{s.name}/{s.name}_{split}.ts"
                if member not in names:
                    raise SystemExit(f"{args.wheel}: no {member} inside (is it aeon 1.6.0?)")
                data = zf.read(member)
                digest = hashlib.sha256(data).hexdigest()
                target = Path(out) / f"{s.name}_{split}.ts"
                atomic_write_bytes(target, data)
                print(f"wrote {target}: {len(data)} bytes, sha256 {digest}")
                if digest != pinned:
                    print(f"warning: {target.name}: sha256 differs from the pinned {pinned}", file=sys.stderr)
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
