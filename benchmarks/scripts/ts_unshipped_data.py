"""The four UCR classification sets in aeon 1.6.0's wheel that hotstart does not ship, for benchmarks only.

    pip download --no-deps aeon==1.6.0 -d /tmp/aeon
    python -m benchmarks.scripts.ts_unshipped_data --wheel /tmp/aeon/aeon-1.6.0-py3-none-any.whl

hotstart ships five of the wheel's series sets (hotstart/datasets/timeseries_builtin.py). The wheel
holds four more UCR 2018 classification problems with published InceptionTime results: ACSF1,
ArrowHead, OSULeaf and PickupGestureWiimoteZ (its other classification files are not UCR problems:
``UnitTest`` is a 42-series cut of Chinatown, ``Covid3Month_disc`` a discretised copy of the shipped
Covid3Month regression). They are not shipped and never read by the tests: `extract` copies the
``<Name>_TRAIN.ts`` / ``_TEST.ts`` members byte for byte out of the wheel (opened only as a zip:
nothing in it is imported or run), checks the pinned sha256 of the wheel and of every file, and
writes them atomically into a cache folder (``$HOTSTART_CACHE_DIR`` or the user cache, under
``ucr-unshipped/``), as scripts/make_timeseries.py does for the shipped ones. `load` reads a set
from there with hotstart's own ``.ts`` reader, the archive's test split held out as ``"test"``.
"""
from __future__ import annotations

import argparse
import hashlib
import zipfile
from pathlib import Path

WHEEL_SHA256 = "d05227086706f80111ac5fee8de4d5d3115bb3bcfd1c786c8629393055816409"  # aeon-1.6.0-py3-none-any.whl
# name -> (sha256 of <name>_TRAIN.ts, of <name>_TEST.ts), as stored in aeon 1.6.0's wheel
FILES = {
    "ACSF1": ("0646b90dc4843e02baed6b2ba345c5601a4991b6796565489cef1b2d92a7537b",
              "93e8aaeb44a10af181d24a156e60da7021193cd990ca28f263fccf3b905bfebf"),
    "ArrowHead": ("a83c470aaf611a5f5284377cce27a5fc9f6292bc3d110257b0fd4905ced5ee72",
                  "5417dab42626d41df5e435bb22458c2df40dfad4bcd3b59559bbe72e20e84904"),
    "OSULeaf": ("86b9d6e860414ffd26cebc62fff84ffb37fa588ef3e5bf79e4094a437c36ddfc",
                "6c549dd354f9e42d5985fa5fab75321ca9acefc7873457e71467fc8a31f107ce"),
    "PickupGestureWiimoteZ": ("4d303d9990df621c066fc454d62626e3721aed008462103500b86b1ac1ca92c8",
                              "a9109bce918e48ee0e924e9cf2fdfdc4de364a3d88ec5e8aa44399ff08b11361"),
}


def cache_folder() -> Path:
    """Where the extracted files live: beside hotstart's compile cache, never inside the package."""
    from hotstart.compile_cache.cache import cache_dir

    return cache_dir() / "ucr-unshipped"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def paths(name: str, folder: Path | None = None) -> tuple[Path, Path]:
    folder = cache_folder() if folder is None else Path(folder)
    return folder / f"{name}_TRAIN.ts", folder / f"{name}_TEST.ts"


def cached(name: str, folder: Path | None = None) -> bool:
    """True when both files of `name` are in the cache with their pinned digests."""
    return all(p.is_file() and sha256(p.read_bytes()) == pinned for p, pinned in zip(paths(name, folder), FILES[name]))


def extract(wheel: Path, names=tuple(FILES), folder: Path | None = None) -> list[Path]:
    """Copy the sets' files out of the aeon 1.6.0 wheel into the cache; refuse any digest that differs."""
    from hotstart.atomic import atomic_write_bytes

    blob = Path(wheel).read_bytes()
    if sha256(blob) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {sha256(blob)} is not aeon-1.6.0-py3-none-any.whl's {WHEEL_SHA256}")
    written = []
    with zipfile.ZipFile(wheel) as zf:
        for name in names:
            for target, pinned in zip(paths(name, folder), FILES[name]):
                member = f"aeon/datasets/data/{name}/{target.name}"
                data = zf.read(member)
                if sha256(data) != pinned:
                    raise SystemExit(f"{wheel}: {member} has sha256 {sha256(data)}, not the pinned {pinned}")
                atomic_write_bytes(target, data)
                written.append(target)
    return written


def load(name: str, folder: Path | None = None):
    """``(Data, blocks)`` of a cached set, its test split held out; a clear error if not extracted yet."""
    from hotstart import datasets

    if name not in FILES:
        raise SystemExit(f"{name!r} is not one of the unshipped sets {sorted(FILES)}")
    if not cached(name, folder):
        raise SystemExit(f"{name}: not in {cache_folder() if folder is None else folder} (or its sha256 differs); run "
                         "`python -m benchmarks.scripts.ts_unshipped_data --wheel aeon-1.6.0-py3-none-any.whl` "
                         "after `pip download --no-deps aeon==1.6.0 -d /tmp/aeon`")
    train, test = paths(name, folder)
    return datasets.TimeSeriesData(train, test=test)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wheel", type=Path, required=True, help="aeon-1.6.0-py3-none-any.whl")
    p.add_argument("--out", type=Path, default=None, help="cache folder (default: $HOTSTART_CACHE_DIR/ucr-unshipped)")
    args = p.parse_args(argv)
    for path in extract(args.wheel, folder=args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
