"""The built-in series sets: four UCR/UEA classification problems and one TSER regression problem.

Each is its archive's own ``<Name>_TRAIN.ts`` / ``<Name>_TEST.ts`` pair, copied byte for byte out
of the ``aeon`` 1.6.0 wheel on PyPI by ``scripts/make_timeseries.py`` (aeon's code is BSD-3 and
is not copied or imported; the data is the archives'). The sha256 of every file is pinned here
and checked by the tests. The archive's test split is kept as the ``"test"`` split, held out as
the folder recipes hold out ``test/``: ``tasklearner`` never trains or validates on it.

Cite the archives:

- UCR: H. A. Dau, A. Bagnall, K. Kamgar, C.-C. M. Yeh, Y. Zhu, S. Gharghabi, C. A. Ratanamahatana,
  E. Keogh, "The UCR Time Series Archive", IEEE/CAA J. Autom. Sinica 6(6), 2019,
  doi:10.1109/JAS.2019.1911747 (GunPoint, ItalyPowerDemand);
- UEA: A. Bagnall, H. A. Dau, J. Lines, M. Flynn, J. Large, A. Bostrom, P. Southam, E. Keogh,
  "The UEA multivariate time series classification archive, 2018", arXiv:1811.00075
  (BasicMotions, JapaneseVowels);
- TSER: C. W. Tan, C. Bergmeir, F. Petitjean, G. I. Webb, "Time series extrinsic regression",
  Data Mining and Knowledge Discovery 35, 2021, doi:10.1007/s10618-021-00745-9 (Covid3Month).

    >>> from hotstart import datasets
    >>> data, (series, label) = datasets.load("GunPoint")
    >>> len(data.split("train")), len(data.split("test")), series.channels, series.length
    (50, 150, 1, 150)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import file_digest
from .errors import DatasetError

__all__ = ["SeriesSet", "SERIES_SETS", "SERIES_DIR", "series_files", "file_sha256"]

SERIES_DIR = Path(__file__).parent / "data" / "timeseries"


@dataclass(frozen=True)
class SeriesSet:
    """One built-in set: its archive name, what it is, and the pinned sha256 of its two files."""

    name: str          # the archive's problem name, also the file stem and the `datasets.load` name
    description: str   # one line
    archive: str       # "UCR", "UEA" or "TSER": which archive to cite
    size: str          # series, channels, length, classes
    train_sha256: str  # of <name>_TRAIN.ts as shipped in aeon 1.6.0
    test_sha256: str   # of <name>_TEST.ts


SERIES_SETS = {s.name: s for s in [
    SeriesSet("GunPoint", "Hand x-position of an actor drawing a gun or pointing (2 classes)", "UCR",
              "50 train + 150 test series, 1 channel, length 150, 2 classes",
              "f842401779fd9800d247d8b33121a1a4643710a19b24917dbdd9a060ca8630d5",
              "79332750788a6227b325b96bd0d70130c8eb707b9731f8d7dec62b7a7d36017e"),
    SeriesSet("ItalyPowerDemand", "Italian daily power demand: October-March or April-September (2 classes)", "UCR",
              "67 train + 1,029 test series, 1 channel, length 24, 2 classes",
              "341269cb7e6cef96846b30e774580beec79addb93848ba360145219115a74b7c",
              "26122451f87dd0387ef90b18bc8a86c041371b8a1c068004922b939971247144"),
    SeriesSet("BasicMotions", "Smart-watch accelerometer and gyroscope: standing, walking, running, badminton", "UEA",
              "40 train + 40 test series, 6 channels, length 100, 4 classes",
              "8dc43cc6306cb679c888c01e26f91772ac4441a916da43bac8b79734a538b9d6",
              "79213102bc6fca1a398ad98ce1185dff0208fa3d1465e687f48288946b0ff8dc"),
    SeriesSet("JapaneseVowels", "Nine speakers saying 'ae': 12 LPC cepstrum coefficients (unequal lengths)", "UEA",
              "270 train + 370 test series, 12 channels, length 7 to 29, 9 classes",
              "68a430eabd919cc77f40b1f5f3bc0dcafacc1486bca9260785aeb7d262cc78cd",
              "b3d41d6a0ca3bcad3afb9ca7d4365382aa51341e2e58bae2a574babdda5b9462"),
    SeriesSet("Covid3Month", "Daily confirmed COVID-19 cases of a country over 3 months -> its death rate (regression)",
              "TSER", "140 train + 61 test series, 1 channel, length 84, 1 target",
              "8a58e6186143714d47dfeb2a24e954ef1fb5e7a1d72344b6bb9bbce10ccdfd6f",
              "5bf6d4ce5cce67735f0893673221c86f10effe284cf4555a162060329b388bea"),
]}


def series_files(name: str) -> tuple[Path, Path]:
    """(train file, test file) of the built-in set `name`; a clear error if the package lacks them."""
    if name not in SERIES_SETS:
        raise DatasetError(f"no built-in series set {name!r}; known: {sorted(SERIES_SETS)}")
    paths = SERIES_DIR / f"{name}_TRAIN.ts", SERIES_DIR / f"{name}_TEST.ts"
    for p in paths:
        if not p.is_file():
            raise DatasetError(f"{name}: {p} is missing from the installed package; "
                               "regenerate it with scripts/make_timeseries.py")
    return paths


def file_sha256(path: Path) -> str:
    """The SHA-256 of a shipped series file, to check it against its pinned one (hotstart/file_digest.py)."""
    return file_digest.file_sha256(path)
