"""The model contract: what a saved hotstart model IS, without torch.

A saved model is a contract: what an input becomes before the network, and what the network's
output means. This package holds all of it, in numpy and pillow only (the runtimes that run a
file load where they run it, never here), so that training, every runtime and an app that copies
it (``hotstart export --bundle``) encode and decode alike:

=================  ===============================================================================
module             job
=================  ===============================================================================
schema.py          the metadata that exported files and model folders carry: versioned, read and
                   checked key by key (a file's own input and output keys too: layout, int8
                   scales, batch size), and against the model's own input and output shapes
image_files.py     image files under folders: the one folder walker (recipes, predict, a bundle)
images.py          image files and arrays: reading (EXIF), the pixel value rules (modes, 16-bit,
                   floats), the conversion to L or RGB
resize.py          the resize kernel (torchvision's antialiased bilinear on uint8, in numpy)
image_input.py     the inference encoding of an image (training's ImagePreprocessing calls it)
table_input.py     the encoding of a table row (training's TabularPreprocessing calls it)
table_rows.py      table rows read from a CSV file (the cells training reads as missing, missing)
series_input.py    the encoding of a series (training's SeriesPreprocessing calls it)
series_files.py    series read from .npy files (never unpickled)
outputs.py         the decoding of outputs: labels, masks, points, regression values
kinds.py           each task kind's encoder, decoder and metadata checks
model.py           `ContractModel`: the runtime interface (metadata, raw inputs -> decoded outputs)
report.py          printing predictions as text or (always valid) JSON
errors.py          MetadataError, ImageInputError, InputValueError (plain ValueErrors)
=================  ===============================================================================

It imports nothing of hotstart's and uses relative imports only, so a bundle carries it as a
folder of its own (``hotstart_contract/``) beside ``predictor.py``. hotstart's layers build on
it: contract <- blocks <- encodings <- tasks <- learner (DESIGN.md, section 2; tests/test_import_layers.py
holds it).
"""
from .errors import ImageInputError, InputValueError, MetadataError
from .image_files import IMAGE_EXTENSIONS, image_paths, list_image_files
from .image_input import encode_image, normalize_pixels, resized_pixels
from .images import (array_image_problem, array_to_pil, load_image, pil_image_problem, pixel_values_problem,
                     read_image_file, to_l_or_rgb, upright)
from .kinds import KINDS, SERIES_KINDS, TABLE_KINDS, check_metadata
from .model import ContractModel, cannot_load, model_bytes, model_file
from .outputs import decode_mask, points_from_unit, points_to_unit
from .report import format_prediction, json_line, predict_paths
from .resize import resize_uint8
from .schema import (FORMAT, SCHEMA_VERSION, check_against_model, check_file_io, decode_metadata, format_name,
                     input_shape, props_from_json, read_metadata)
from .series_files import predict_series_files, read_npy_series
from .series_input import encode_series, encode_series_input
from .table_input import TableEncoder, as_row, category_key, is_missing, row_problem
from .table_rows import MISSING_CELLS, predict_rows, read_rows

__all__ = ["ImageInputError", "InputValueError", "MetadataError", "IMAGE_EXTENSIONS", "image_paths",
           "list_image_files", "encode_image", "normalize_pixels",
           "resized_pixels", "array_image_problem", "array_to_pil", "load_image", "pil_image_problem",
           "pixel_values_problem", "read_image_file", "to_l_or_rgb", "upright", "KINDS", "SERIES_KINDS", "TABLE_KINDS",
           "check_metadata", "ContractModel", "cannot_load", "model_bytes", "model_file", "decode_mask", "points_from_unit", "points_to_unit",
           "format_prediction", "json_line", "predict_paths", "resize_uint8", "FORMAT", "SCHEMA_VERSION",
           "check_against_model", "check_file_io", "decode_metadata", "format_name", "input_shape",
           "props_from_json", "read_metadata",
           "encode_series", "encode_series_input", "TableEncoder", "as_row", "category_key", "is_missing",
           "row_problem", "predict_series_files", "read_npy_series", "MISSING_CELLS", "predict_rows", "read_rows"]
