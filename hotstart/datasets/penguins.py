"""The built-in ``penguins`` table: 344 Palmer Archipelago penguins, 8 columns, missing values included.

Source: the palmerpenguins data of A. M. Horst, A. P. Hill and K. B. Gorman (2020), collected by
Dr. Kristen Gorman and the Palmer Station Long Term Ecological Research Program; released under
CC0. Cite: Gorman KB, Williams TD, Fraser WR (2014), PLoS ONE 9(3): e90081,
https://doi.org/10.1371/journal.pone.0090081. The file is the 344-row ``penguins.csv`` (not
``penguins_raw``) as shipped in the ``palmerpenguins`` wheel on PyPI; ``scripts/make_penguins.py``
extracts it again, byte for byte.

Columns: species (Adelie, Chinstrap, Gentoo), island (Biscoe, Dream, Torgersen), bill_length_mm,
bill_depth_mm, flipper_length_mm, body_mass_g, sex (female, male; 11 missing), year (2007-2009).
Two penguins have no measurements at all.

    >>> from hotstart import datasets
    >>> data, (row, label) = datasets.load("penguins", target="species")
    >>> row.categorical, label.classes
    (['island', 'sex', 'year'], ['Adelie', 'Chinstrap', 'Gentoo'])
"""
from __future__ import annotations

from pathlib import Path

from .. import file_digest
from .errors import DatasetError
from .table_data import TableData

__all__ = ["load_penguins", "PENGUINS_FILE", "PENGUINS_SHA256"]

PENGUINS_FILE = Path(__file__).parent / "data" / "penguins.csv"
PENGUINS_SHA256 = "f204db2c753b0937caac3cb35258562c14f073e4bbc76be24b4c51ce22767a93"  # palmerpenguins 0.1.6


def load_penguins(target="species", *, categorical=None, continuous=None, regression=None):
    """``TableData`` of the shipped CSV with `target` (any column; default ``"species"``).

    Rows whose target is missing are dropped (body mass, for instance, is missing for 2 of the
    344 penguins); input columns are inferred unless given (see `TableData`).
    """
    if not PENGUINS_FILE.is_file():
        raise DatasetError(f"penguins: {PENGUINS_FILE} is missing from the installed package; "
                           "regenerate it with scripts/make_penguins.py")
    return TableData(PENGUINS_FILE, target=target, categorical=categorical, continuous=continuous,
                     regression=regression, dropna_target=True)


def file_sha256() -> str:
    """The SHA-256 of the shipped penguins CSV (hotstart/file_digest.py)."""
    return file_digest.file_sha256(PENGUINS_FILE)
