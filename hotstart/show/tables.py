"""Table views: rows with their truth and the model's prediction, or as the model sees them.

A row of numbers is best shown as a row, so the result is a `ResultsTable`: printed as text, shown
as an HTML table in a notebook, and ``.to_pandas()`` when pandas is installed.
"""
from __future__ import annotations

import html
import math


class ResultsTable:
    """Rows (dicts) under named columns; what ``learner.show_results()`` returns for tables."""

    def __init__(self, columns: list[str], rows: list[dict]):
        self.columns = list(columns)
        self.rows = [dict(r) for r in rows]

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)

    def __len__(self):
        return len(self.rows)

    def _cells(self) -> list[list[str]]:
        return [[_fmt(r.get(c)) for c in self.columns] for r in self.rows]

    def __str__(self):
        cells = self._cells()
        widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(self.columns)]
        line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))  # noqa: E731
        return "\n".join([line(self.columns)] + [line(row) for row in cells])

    __repr__ = __str__

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for row in self._cells())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def results_table(task, raw_inputs, targets, outputs) -> ResultsTable:
    """The rows as given (``raw_inputs[i]``; missing cells shown as ``NA``), then ``truth``,
    ``prediction`` and, for classes, the predicted class's ``probability``, one row per output."""
    columns = list(task.input_block.columns) + ["truth", "prediction"]
    classes = task.classes is not None
    if classes:
        columns.append("probability")
    rows = []
    for i, (y, o) in enumerate(zip(targets, outputs)):
        raw = raw_inputs[i]
        row = {c: raw[c] for c in task.input_block.columns}
        pred, probs = task.decode_output(o)
        row["truth"] = _plain(task.decode_target(y))
        row["prediction"] = _plain(pred)
        if classes:
            row["probability"] = float(probs.max())
        rows.append(row)
    return ResultsTable(columns, rows)


def batch_table(task, samples) -> ResultsTable:
    """Encoded ``(row, target)`` samples decoded back, as the model sees them: categories the model
    does not know (unseen in training, or missing) and filled-in numbers show as ``NA``; then the
    ``target``."""
    columns = list(task.input_block.columns) + ["target"]
    rows = []
    for x, y in samples:
        row = task.decode_input(x)
        row["target"] = _plain(task.decode_target(y))
        rows.append(row)
    return ResultsTable(columns, rows)


def _plain(v):
    """A length-1 array (one regression output) as a float; other values unchanged."""
    if hasattr(v, "tolist"):
        v = v.tolist()
        return v[0] if isinstance(v, list) and len(v) == 1 else v
    return v


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NA"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)
