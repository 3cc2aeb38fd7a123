"""The sktime / aeon ``.ts`` format of the UCR, UEA and TSER archives: read it, and write it back.

A file is comment lines (``#``), a header of ``@key value`` lines, ``@data``, then one series per
line: its channels ("dimensions") separated by ``:``, each a comma-separated list of numbers (``?``
or ``NaN`` for a missing value), then, when the header says ``@classLabel true ...`` or
``@targetLabel true``, the class label or the regression target after a last ``:``::

    @problemName GunPoint
    @univariate true
    @equalLength true
    @seriesLength 150
    @classLabel true 1 2
    @data
    -0.6478854,-0.64199155,...:2

`read_ts` reads univariate and multivariate files, of equal or unequal lengths (within one series,
channels may differ in length too: the shorter are padded with NaN, missing, to the longest),
with missing values (``?``, or NaN in any spelling Python's ``float`` reads: ``NaN``, ``nan``,
``NAN``), class labels or regression targets, with or without a UTF-8 byte-order mark. Time-stamped
data (``@timeStamps true``, values as ``(t, v)`` pairs) is refused with a clear error. Every problem
in a file is a `TSFormatError` that names the file and the line: a wrong number of channels, a
missing label, text where a number should be, a label the header does not list (with the line of
the header's list), a regression target that is missing or not finite, a header that contradicts
itself (``@univariate true`` with ``@dimensions 3``, a key given twice with two values, missing
values under ``@missing false``, unequal lengths under ``@equalLength true``), and a header key
that is a misspelling of a known one (``@classLabels``: its series would be misread later).

`write_ts` refuses what `read_ts` could not read back (a label with a space or ``:``, a value or
a target that is not finite), naming the series or the label.

Hand-written: aeon's loader would make aeon (and its dependencies) a dependency of hotstart for
sixty lines of parsing, and its errors do not name the line.
"""
from __future__ import annotations

import difflib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import DatasetError

__all__ = ["TSFile", "TSFormatError", "read_ts", "write_ts"]

_BOOL = {"true": True, "false": False}
_KNOWN_KEYS = ("problemname", "timestamps", "missing", "univariate", "dimensions", "equallength", "serieslength",
               "classlabel", "targetlabel")
_ALIASES = {"dimension": "dimensions"}  # aeon reads both


class TSFormatError(DatasetError):
    """A ``.ts`` file does not follow the format; the message starts with ``file:line:``."""


@dataclass
class TSFile:
    """What a ``.ts`` file holds.

    `series`: one float64 array (channels, length) per line; lengths may differ between series.
    `labels`: the class label (text) of each series, or None. `targets`: the regression target
    of each series (float64 array), or None. `class_labels`: the classes the header lists.
    """

    problem_name: str
    series: list
    labels: list | None = None
    targets: np.ndarray | None = None
    class_labels: list | None = None
    header: dict = field(default_factory=dict)

    @property
    def channels(self) -> int:
        return int(self.series[0].shape[0]) if self.series else int(self.header.get("dimensions", 1))

    @property
    def lengths(self) -> list[int]:
        return [int(s.shape[1]) for s in self.series]


def read_ts(path: str | os.PathLike) -> TSFile:
    """Read a ``.ts`` file (see the module doc). Errors name the file and the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # "-sig": a byte-order mark is skipped, not refused
    except (OSError, UnicodeDecodeError) as e:
        raise TSFormatError(f"{path}: cannot read it as a UTF-8 text file ({e})") from e
    header: dict = {}
    lines: dict = {}  # header key -> the line it is on, for errors found later
    first_length: list = []  # (length, where) of the first series, for @equalLength true
    series, labels, targets = [], [], []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{lineno}"
        if not in_data:
            if not line.startswith("@"):
                raise TSFormatError(f"{where}: expected a header line (@key value) or @data, got {line[:40]!r}")
            key, value = _split_header(line[1:])
            key = _ALIASES.get(key.lower(), key.lower())
            if key == "data":
                _check_header(header, lines, path)
                in_data = True
                continue
            _check_key(key, where)
            parsed = _header_value(key, value.strip(), where)
            if key in header and header[key] != parsed:
                raise TSFormatError(f"{where}: @{key} is given twice, with two values (line {lines[key]} and this one)")
            header[key], lines[key] = parsed, lineno
            continue
        values, label = _parse_line(line, header, lines, where)
        first_length = first_length or [(values.shape[1], where)]
        if header.get("equallength") and values.shape[1] != first_length[0][0]:
            raise TSFormatError(f"{where}: a series of length {values.shape[1]}, but the one on {first_length[0][1]} "
                                f"has length {first_length[0][0]} and the header says @equalLength true on line "
                                f"{lines['equallength']}")
        series.append(values)
        if label is not None:
            if header["classlabel"] is not None:
                labels.append(label)
            else:
                targets.append(_target(label, where))
    if not in_data:
        raise TSFormatError(f"{path}: no @data line, so no series (is it a .ts file?)")
    if not series:
        raise TSFormatError(f"{path}: @data is followed by no series")
    return TSFile(problem_name=header.get("problemname", path.stem), series=series,
                  labels=labels if header["classlabel"] is not None else None,
                  targets=np.asarray(targets, dtype=np.float64) if header.get("targetlabel") else None,
                  class_labels=header["classlabel"], header=header)


def _split_header(text: str) -> tuple[str, str]:
    """(key, value) of ``key value``, with any whitespace between them: a tab too
    (``@classLabel<TAB>true 1 2``, which a split at the first space read as one unknown key)."""
    parts = text.split(None, 1)
    return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")


def _check_key(key: str, where: str) -> None:
    """Refuse a misspelling of a known key: its meaning would be lost, and the series misread later."""
    if key in _KNOWN_KEYS:
        return
    near = difflib.get_close_matches(key, _KNOWN_KEYS, n=1, cutoff=0.8)
    if near:
        raise TSFormatError(f"{where}: unknown header key @{key}; did you mean @{near[0]}? "
                            f"(known: {', '.join('@' + k for k in _KNOWN_KEYS)})")


def _target(text: str, where: str) -> float:
    """A regression target: a finite number (a missing or infinite one cannot be trained on)."""
    try:
        value = float(text)
    except ValueError:
        raise TSFormatError(f"{where}: the regression target {text!r} is not a number") from None
    if not math.isfinite(value):
        raise TSFormatError(f"{where}: the regression target {text!r} is not a finite number: a series "
                            f"without a target cannot be trained on (remove the line, or give its target)")
    return value


def _header_value(key: str, value: str, where: str):
    if key in ("timestamps", "missing", "univariate", "equallength", "targetlabel"):
        if value.lower() not in _BOOL:
            raise TSFormatError(f"{where}: @{key} must be true or false, got {value!r}")
        return _BOOL[value.lower()]
    if key in ("dimensions", "serieslength"):
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise TSFormatError(f"{where}: @{key} must be a positive whole number, got {value!r}")
        return n
    if key == "classlabel":
        flag, *classes = value.split()
        if flag.lower() not in _BOOL:
            raise TSFormatError(f"{where}: @classLabel must start with true or false, got {value!r}")
        if _BOOL[flag.lower()] and not classes:
            raise TSFormatError(f"{where}: @classLabel true lists no classes")
        return classes if _BOOL[flag.lower()] else None
    return value  # problemName and anything else: kept as text


def _check_header(header: dict, lines: dict, path: Path) -> None:
    """Refuse a header that contradicts itself, naming the lines that do."""
    def at(*keys):
        return f"{path}:{lines[keys[0]]}" + "".join(f" (and line {lines[k]})" for k in keys[1:])

    if header.get("timestamps"):
        raise TSFormatError(f"{at('timestamps')}: time-stamped series (@timeStamps true) are not supported; "
                            "write the values without time stamps")
    header.setdefault("classlabel", None)
    if header["classlabel"] is not None and header.get("targetlabel"):
        raise TSFormatError(f"{at('classlabel', 'targetlabel')}: the header says both @classLabel true and "
                            f"@targetLabel true")
    dims, univariate = header.get("dimensions"), header.get("univariate")
    if dims is not None and univariate is not None and (dims == 1) != univariate:
        raise TSFormatError(f"{at('univariate', 'dimensions')}: the header contradicts itself: @univariate "
                            f"{str(univariate).lower()} with @dimensions {dims}")
    if header.get("equallength") is False and "serieslength" in header:
        raise TSFormatError(f"{at('equallength', 'serieslength')}: the header contradicts itself: @equalLength "
                            f"false with @seriesLength {header['serieslength']}")
    if "dimensions" not in header:
        if header.get("univariate", True) is False:
            header["dimensions"] = None  # multivariate without @dimensions: taken from the first series
        else:
            header["dimensions"] = 1


def _parse_line(line: str, header: dict, lines: dict, where: str):
    parts = line.split(":")
    has_label = header["classlabel"] is not None or bool(header.get("targetlabel"))
    dims = header["dimensions"]
    if dims is None:  # learned from the first series
        dims = header["dimensions"] = len(parts) - has_label
    expected = dims + has_label
    if len(parts) != expected:
        if has_label and len(parts) == dims:
            raise TSFormatError(f"{where}: missing label: {dims} channel(s) and no label after a last ':' "
                                f"(the header says {'@classLabel' if header['classlabel'] else '@targetLabel'} true)")
        hint = (" (a label after a last ':'? the header has no @classLabel true or @targetLabel true line)"
                if not has_label and len(parts) == dims + 1 else "")
        raise TSFormatError(f"{where}: {len(parts) - has_label} channel(s) separated by ':', but the header says "
                            f"{dims}{' (plus the label)' if has_label else ''}{hint}")
    label = parts[-1].strip() if has_label else None
    if label is not None:
        if not label:
            raise TSFormatError(f"{where}: missing label: the text after the last ':' is empty")
        classes = header["classlabel"]
        if classes is not None and label not in classes:
            raise TSFormatError(f"{where}: label {label!r} is not among the classes that the header lists on line "
                                f"{lines['classlabel']} {classes} (classes are separated by spaces)")
    channels = []
    for d, chunk in enumerate(parts[:dims]):
        cells = chunk.split(",")
        row = np.empty(len(cells), dtype=np.float64)
        for k, cell in enumerate(cells):
            cell = cell.strip()
            try:
                row[k] = math.nan if cell == "?" else float(cell)
            except ValueError:
                raise TSFormatError(f"{where}: channel {d}, value {k}: {cell[:30]!r} is not a number "
                                    "(missing values are written '?')") from None
            if math.isinf(row[k]):
                raise TSFormatError(f"{where}: channel {d}, value {k}: {cell!r} is not a finite number")
            if math.isnan(row[k]) and header.get("missing") is False:
                raise TSFormatError(f"{where}: channel {d}, value {k} is missing ({cell!r}), but the header says "
                                    f"@missing false on line {lines['missing']}")
        channels.append(row)
    length = max(len(c) for c in channels)
    if header.get("equallength") and header.get("serieslength") and length != header["serieslength"]:
        raise TSFormatError(f"{where}: a series of length {length}, but the header says @seriesLength "
                            f"{header['serieslength']}")
    out = np.full((dims, length), math.nan)
    for d, c in enumerate(channels):
        out[d, :len(c)] = c
    return out, label


def write_ts(path: str | os.PathLike, series: Sequence, *, labels: Sequence | None = None,
             targets: Sequence[float] | None = None, class_labels: Sequence[str] | None = None,
             problem_name: str = "series") -> Path:
    """Write series (arrays (channels, length); NaN = missing) as a ``.ts`` file, atomically.

    Numbers are written with ``repr``, so `read_ts` gives back exactly the same float64 values.
    Trailing NaN of a channel are written as ``?`` too: the file keeps each series' full length.
    What `read_ts` could not read back is refused (`DatasetError`): a label that is empty or holds
    whitespace or ``:`` (the format has no quoting: the header lists classes separated by spaces,
    and ``:`` separates a line's channels), an infinite value, a target that is not finite.
    """
    from ..atomic import atomic_write_bytes

    if labels is not None and targets is not None:
        raise DatasetError("write_ts: pass labels= (classes) or targets= (regression), not both")
    if any(c in problem_name for c in "\r\n") or problem_name != problem_name.strip():
        raise DatasetError(f"write_ts: problem_name={problem_name!r} must be one line without leading or trailing "
                           f"spaces (the header line holds it)")
    arrays = [np.asarray(s, dtype=np.float64).reshape(-1, np.shape(s)[-1]) for s in series]
    if not arrays:
        raise DatasetError("write_ts: no series to write")
    for i, a in enumerate(arrays):
        if np.isinf(a).any():
            raise DatasetError(f"write_ts: series {i} holds an infinite value; only finite numbers and NaN (missing) "
                               f"can be written")
    dims = {a.shape[0] for a in arrays}
    if len(dims) != 1:
        raise DatasetError(f"write_ts: every series needs the same number of channels, got {sorted(dims)}")
    lengths = {a.shape[1] for a in arrays}
    missing = any(np.isnan(a).any() for a in arrays)
    lines = [f"@problemName {problem_name}", "@timeStamps false", f"@missing {str(missing).lower()}",
             f"@univariate {str(dims == {1}).lower()}", f"@dimensions {dims.pop()}",
             f"@equalLength {str(len(lengths) == 1).lower()}"]
    if len(lengths) == 1:
        lines.append(f"@seriesLength {lengths.pop()}")
    for what, given in (("labels", labels), ("targets", targets)):
        if given is not None and len(given) != len(arrays):
            raise DatasetError(f"write_ts: {len(arrays)} series but {len(given)} {what}")
    if labels is not None:
        labels = [str(v) for v in labels]
        classes = [str(c) for c in class_labels] if class_labels is not None else sorted(set(labels))
        for what, names in (("class_labels", classes), ("labels", labels)):
            for i, name in enumerate(names):
                if not name or any(c.isspace() or c == ":" for c in name):
                    raise DatasetError(f"write_ts: {what}[{i}] = {name!r} cannot be written: a .ts label must be "
                                       f"non-empty, without spaces or ':' (read_ts could not read it back)")
        unknown = sorted(set(labels) - set(classes))
        if unknown:
            raise DatasetError(f"write_ts: labels {unknown} are not among class_labels {classes}")
        lines.append("@classLabel true " + " ".join(classes))
        ends = [f":{v}" for v in labels]
    elif targets is not None:
        values = [float(v) for v in targets]
        bad = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
        if bad is not None:
            raise DatasetError(f"write_ts: targets[{bad}] = {values[bad]!r} is not a finite number")
        lines += ["@classLabel false", "@targetLabel true"]
        ends = [f":{v!r}" for v in values]
    else:
        lines.append("@classLabel false")
        ends = [""] * len(arrays)
    lines.append("@data")
    for a, end in zip(arrays, ends):
        lines.append(":".join(",".join("?" if math.isnan(v) else repr(float(v)) for v in ch) for ch in a) + end)
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return Path(path)
