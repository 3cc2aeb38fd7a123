"""The dataset registry: names -> loaders, with metadata, for ``datasets.load("digits")``.

    datasets.catalog()                       # [{"name": "digits", "remote": False, ...}, ...]
    data, blocks = datasets.load("digits")   # built in, no network
    data, blocks = datasets.load("imagenette2-160")   # downloaded once, verified, cached
    datasets.register("mine", my_loader, description="...")   # your own, explicitly

Like timm's model registry, but without decorators or import-time registration: the built-in
entries are one literal list (`builtin_entries`), the default `Registry` is built from it, and
anything else gets in only through an explicit `register` call (undone by `unregister`). A fresh
``Registry()`` is independent of the default one, which is what tests use.

A *local* entry's loader is called as ``loader(**kw)``. A *remote* entry (one with a `url`)
is fetched first (`download` + `extract` into the cache, once) and its loader is called as
``loader(folder, **kw)`` with the extracted folder.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import remote
from .digits import load_digits
from .download import data_dir, download, extract
from .errors import DatasetError
from .penguins import load_penguins
from .synthetic import load_digits_segmentation, load_discs, load_shapes
from ..errors import UsageError, UsageTypeError
from .timeseries import load_series_set
from .timeseries_builtin import SERIES_SETS

__all__ = ["Entry", "Registry", "builtin_entries", "default_registry", "load", "catalog",
           "register", "unregister", "fetch"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # also a folder name in the cache


@dataclass(frozen=True)
class Entry:
    """One dataset: how to load it and what it is."""

    name: str                       # what `load` takes; also the cache folder name
    loader: Callable[..., Any] = field(repr=False)  # local: loader(**kw); remote: loader(folder, **kw)
    description: str = ""           # one line: what is in it
    source: str = ""                # who made it / where it comes from (a citation or URL)
    license: str = ""               # under what terms it may be used
    size: str = ""                  # human-readable: samples, classes, download size
    url: str | None = None          # archive to download; None for data shipped in the package
    sha256: str | None = None       # of the archive; None = unknown (trust on first use, warned)
    folder: str | None = None       # top-level folder inside the archive that holds the data

    @property
    def remote(self) -> bool:
        return self.url is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly metadata (everything but the loader)."""
        return {"name": self.name, "description": self.description, "source": self.source,
                "license": self.license, "size": self.size, "remote": self.remote,
                "url": self.url, "sha256": self.sha256}


class Registry:
    """A set of named `Entry`s with `register` / `unregister` / `get` / `load` / `fetch`."""

    def __init__(self, entries: list[Entry] | tuple[Entry, ...] = ()):
        self._entries: dict[str, Entry] = {}
        for e in entries:
            self._add(e, replace=False)

    def register(self, name: str, loader: Callable[..., Any], *, description: str = "", source: str = "",
                 license: str = "", size: str = "", url: str | None = None, sha256: str | None = None,
                 folder: str | None = None, replace: bool = False) -> Entry:
        """Add a dataset; ``replace=True`` to overwrite an existing name (never silently)."""
        entry = Entry(name, loader, description=description, source=source, license=license,
                      size=size, url=url, sha256=sha256.lower() if sha256 else None, folder=folder)
        return self._add(entry, replace=replace)

    def unregister(self, name: str) -> Entry:
        """Remove and return the entry `name`."""
        entry = self.get(name)
        del self._entries[name]
        return entry

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise DatasetError(f"unknown dataset {name!r}; known datasets: {self.names()}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def catalog(self) -> list[dict[str, Any]]:
        """Metadata of every entry, sorted by name."""
        return [self._entries[n].to_dict() for n in self.names()]

    def fetch(self, name: str, *, cache_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
        """Download and extract the remote dataset `name` once; return the folder with its data."""
        entry = self.get(name)
        if not entry.remote:
            raise DatasetError(f"dataset {name!r} ships with hotstart; there is nothing to fetch")
        dest = data_dir(cache_dir) / name
        if not dest.is_dir():  # extraction renames into place, so an existing folder is complete
            archive = download(entry.url, entry.sha256, cache_dir=cache_dir, progress=progress)
            extract(archive, dest)
        root = dest / entry.folder if entry.folder else dest
        if not root.is_dir():
            raise DatasetError(f"dataset {name!r}: expected folder {root} after extracting {entry.url}; "
                               f"delete {dest} to extract again")
        return root

    def load(self, name: str, *, cache_dir: str | os.PathLike | None = None, progress: bool = True, **kw):
        """``(data, blocks)`` for `name`; remote datasets are fetched first (`cache_dir`, `progress`)."""
        entry = self.get(name)
        if entry.remote:
            return entry.loader(self.fetch(name, cache_dir=cache_dir, progress=progress), **kw)
        if cache_dir is not None:
            raise UsageTypeError(f"dataset {name!r} ships with hotstart; cache_dir does not apply")
        return entry.loader(**kw)

    def copy(self) -> "Registry":
        return Registry(list(self._entries.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.names()})"

    def _add(self, entry: Entry, *, replace: bool) -> Entry:
        if not isinstance(entry.name, str) or not _NAME.match(entry.name):
            raise UsageError(f"register: dataset name {entry.name!r} must be letters, digits, '_', '-', '.' "
                             "(it is also a folder name)")
        if not callable(entry.loader):
            raise UsageTypeError(f"register({entry.name!r}): loader must be callable, got {type(entry.loader).__name__}")
        if entry.sha256 is not None and not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
            raise UsageError(f"register({entry.name!r}): sha256 must be 64 hex digits or None, got {entry.sha256!r}")
        if entry.name in self._entries and not replace:
            raise UsageError(f"register: dataset {entry.name!r} already exists; pass replace=True to overwrite it")
        self._entries[entry.name] = entry
        return entry


_SERIES_SOURCES = {
    "UCR": "UCR Time Series Archive 2018, H. A. Dau et al., IEEE/CAA J. Autom. Sinica 6(6) 2019, doi:10.1109/JAS.2019.1911747",
    "UEA": "UEA multivariate archive 2018, A. Bagnall et al., arXiv:1811.00075",
    "TSER": "Monash TSER archive, C. W. Tan et al., DMKD 35 2021, doi:10.1007/s10618-021-00745-9",
}


def builtin_entries() -> list[Entry]:
    """The datasets hotstart knows out of the box (a fresh list on every call)."""
    s3 = "https://s3.amazonaws.com/fast-ai-imageclas/"
    return [
        Entry("digits", load_digits,
              description="Handwritten digits 0-9, 8x8 grayscale (ships with hotstart, no download)",
              source="UCI ML Repository, 'Optical Recognition of Handwritten Digits', "
                     "E. Alpaydin and C. Kaynak (1998), doi:10.24432/C50P49; as in sklearn.datasets.load_digits",
              license="CC BY 4.0", size="1,797 images, 10 classes, 46 KB"),
        Entry("digits-segmentation", load_digits_segmentation,
              description="The digits upsampled to 32x32, each pixel labelled background or its digit's class "
                          "(11 classes; size=, threshold=)",
              source="derived from 'digits' (UCI ML Repository, Alpaydin and Kaynak 1998)",
              license="CC BY 4.0", size="1,797 images and masks, 11 classes"),
        Entry("shapes", load_shapes,
              description="Generated discs, squares and triangles on noise, with masks (n=, size=, seed=)",
              source="generated by hotstart (deterministic from seed)", license="public domain",
              size="1,000 RGB images and masks by default, 4 classes"),
        Entry("discs", load_discs,
              description="Generated bright discs on noise, keypoints at their centres (n=, size=, points=, seed=)",
              source="generated by hotstart (deterministic from seed)", license="public domain",
              size="1,000 grayscale images by default, 1 point each"),
        Entry("penguins", load_penguins,
              description="Palmer penguins table: species, island, bill, flipper, body mass, sex, year; "
                          "missing values; any column as the target (ships with hotstart, no download)",
              source="A. M. Horst, A. P. Hill, K. B. Gorman, palmerpenguins (2020); data by K. Gorman and the "
                     "Palmer Station LTER; Gorman, Williams, Fraser (2014), doi:10.1371/journal.pone.0090081",
              license="CC0 1.0", size="344 rows, 8 columns, 15 KB"),
        *(Entry(s.name, functools.partial(load_series_set, s.name),
                description=f"{s.description}; the archive's train / test split (ships with hotstart, no download)",
                source=_SERIES_SOURCES[s.archive] + "; files as shipped in the aeon 1.6.0 wheel",
                license="free for research use, as the archive states; cite the archive", size=s.size)
          for s in SERIES_SETS.values()),
        Entry("imagenette2-160", remote.imagenette,
              description="10 easy ImageNet classes, shortest side 160 px; splits train / valid (val)",
              source="fast.ai, https://github.com/fastai/imagenette (images from ImageNet)",
              license="Apache 2.0 (imagenette); images subject to the ImageNet terms of use",
              size="13,394 images, 10 classes, ~94 MB download",
              url=s3 + "imagenette2-160.tgz",
              # sha256 as registered by FastAI.jl (src/datasets/datadeps/imageclassification.jl)
              sha256="88daccb09b6fce93f45e6c09ddeb269cce705549e6bff322092a2a5a11489863",
              folder="imagenette2-160"),
        Entry("oxford-iiit-pet", remote.oxford_pets,
              description="37 cat and dog breeds; labels from file names (Breed_name_123.jpg); no splits",
              source="O. M. Parkhi, A. Vedaldi, A. Zisserman, C. V. Jawahar, 'Cats and Dogs', CVPR 2012; "
                     "https://www.robots.ox.ac.uk/~vgg/data/pets/ (fast.ai mirror)",
              license="CC BY-SA 4.0", size="7,390 images, 37 classes, ~800 MB download",
              url=s3 + "oxford-iiit-pet.tgz",
              sha256=None,  # no published sha256 found: trusted on first use, the hash is recorded
              folder="oxford-iiit-pet"),
        Entry("mnist_png", remote.mnist_png,
              description="MNIST handwritten digits as PNG files, 28x28 grayscale; splits train / valid (testing)",
              source="Y. LeCun, C. Cortes, C. J. C. Burges, http://yann.lecun.com/exdb/mnist/ (fast.ai PNG version)",
              license="CC BY-SA 3.0", size="70,000 images, 10 classes, ~16 MB download",
              url=s3 + "mnist_png.tgz",
              # sha256 as registered by FastAI.jl (src/datasets/datadeps/imageclassification.jl)
              sha256="9e18edaa3a08b065d8f80a019ca04329e6d9b3e391363414a9bd1ada30563672",
              folder="mnist_png"),
    ]


default_registry = Registry(builtin_entries())


def load(name: str, **kw):
    """``(data, blocks)`` for the dataset `name` in the default registry; see `catalog()`."""
    return default_registry.load(name, **kw)


def catalog() -> list[dict[str, Any]]:
    """Metadata for every dataset in the default registry."""
    return default_registry.catalog()


def register(name: str, loader: Callable[..., Any], **meta) -> Entry:
    """Add a dataset to the default registry (see `Registry.register`; undo with `unregister`)."""
    return default_registry.register(name, loader, **meta)


def unregister(name: str) -> Entry:
    """Remove a dataset from the default registry."""
    return default_registry.unregister(name)


def fetch(name: str, *, cache_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """Download + extract the remote dataset `name` (once); return its folder."""
    return default_registry.fetch(name, cache_dir=cache_dir, progress=progress)
