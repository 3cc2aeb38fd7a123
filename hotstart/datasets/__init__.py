"""Datasets: lazy containers, recipes for folders and tables, a registry, cached downloads.

    from hotstart import datasets
    data, blocks = datasets.load("digits")           # built in: 1,797 8x8 digits, no network
    data, blocks = datasets.ImageFolders("path/")    # path/<class>/*.jpg or path/{train,valid,test}/<class>/
    data, blocks = datasets.ImageTable("labels.csv", "file", "label")
    data, blocks = datasets.SegmentationFolders("images/", "masks/", classes)   # paired by file stem
    data, blocks = datasets.KeypointTable("points.csv", "file", ["x0", "y0"])
    data, blocks = datasets.load("digits-segmentation")   # also "shapes" (masks), "discs" (keypoints)
    data, blocks = datasets.load("penguins", target="species")   # a table, built in
    data, blocks = datasets.TableData("table.csv", target="price")   # a CSV or a pandas DataFrame
    data, blocks = datasets.load("GunPoint")          # also ItalyPowerDemand, BasicMotions, JapaneseVowels, Covid3Month
    data, blocks = datasets.TimeSeriesData("mine_TRAIN.ts", test="mine_TEST.ts")   # or arrays / a DataFrame

A dataset is ``Data(inputs, targets)`` (optionally with named ``splits``) plus the blocks that
say what inputs and targets are. Nothing here imports torch: this package only knows blocks,
and ``import hotstart.datasets`` stays cheap (PIL is imported when an image is first read).

Modules, one job each: `containers` (Samples, mapobs, Subset, Data, splits), `images`
(load_image), `recipes` (ImageFolders), `image_table` (ImageTable: a CSV of image files and labels),
`table_data` (TableData: a table whose rows are the samples), `timeseries` (TimeSeriesData),
`series_cells` (series values as numbers, naming a bad cell), `frames` (DataFrames without pandas),
`spatial_recipes` (masks, keypoints),
`digits` and `penguins` (the built-in data), `download` (cache, checksums, safe extraction), `remote`
(layouts of downloadable datasets), `registry` (names).
"""
from .containers import (Data, SampleField, Samples, Subset, as_data, mapobs, reads_whole_samples, source_index,
                         split_random, split_train_valid)
from .download import data_dir, download, extract
from .errors import ChecksumError, DatasetError, ImageLoadError
from .images import load_image
from .recipes import IMAGE_EXTENSIONS, ImageFolders, ImageTable, list_images
from .spatial_recipes import KeypointTable, SegmentationFolders, load_mask
from .registry import Entry, Registry, catalog, fetch, load, register, unregister
from .table_data import TableData
from .timeseries import TimeSeriesData
from .ts_format import TSFile, TSFormatError, read_ts, write_ts

__all__ = ["Data", "Samples", "mapobs", "Subset", "SampleField", "as_data", "split_random", "split_train_valid",
           "source_index", "reads_whole_samples", "load_image",
           "ImageLoadError", "ImageFolders", "ImageTable", "load", "catalog", "register", "unregister",
           "download", "extract", "fetch", "DatasetError", "ChecksumError", "Registry", "Entry",
           "data_dir", "list_images", "IMAGE_EXTENSIONS", "TableData", "SegmentationFolders", "KeypointTable",
           "load_mask", "TimeSeriesData", "read_ts", "write_ts", "TSFile", "TSFormatError"]
