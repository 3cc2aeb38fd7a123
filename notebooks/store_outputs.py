"""Execute the notebooks and store them WITH their outputs, minus what changes from run to run.

    python notebooks/store_outputs.py                    # all notebooks in this folder
    python notebooks/store_outputs.py quickstart.ipynb   # one

A notebook stored without outputs shows no plot, table or number where it is hosted (GitHub
renders stored outputs only). So each is stored executed (nbclient, a fresh kernel, in a
temporary folder, as tests/test_notebook.py runs them), and `clean` keeps out what would make every
re-run a diff: stderr streams (progress bars, warnings), execution timestamps, the epoch table's
``time`` column and other timings, and temporary paths. What is left (numbers, tables, figures)
changes only when the code or the machine does: the figures are per machine, as the README says.
tests/test_notebook.py checks that a stored notebook has outputs and nothing of `VOLATILE`.
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

PLACEHOLDER = "…"
# (what, pattern, replacement) on every stored text output
VOLATILE = [
    ("a temporary folder", re.compile(re.escape(tempfile.gettempdir()) + r"/[^/\s'\"]+"), "<tmp>"),
    ("a duration", re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|µs|us|s)\b"), f"{PLACEHOLDER} s"),
    ("a latency figure", re.compile(r"(latency[^:\n]*:)[^\n]*"), rf"\g<1> {PLACEHOLDER}"),
    ("a process id", re.compile(r"\bpid \d+"), f"pid {PLACEHOLDER}"),
    ("a memory figure", re.compile(r"\b\d+(?:\.\d+)? ?MiB\b"), f"{PLACEHOLDER} MiB"),
    ("a peak memory", re.compile(r"(peak memory )\d+(?:\.\d+)? ?[MG]B\b"), rf"\g<1>{PLACEHOLDER} MB"),
]
# tables with a column of seconds: first header cell -> (that column's header cell, whether a
# line's first cell makes it a row); the epoch table (rows start with the epoch), the warmup's
TIMED_TABLES = {"epoch": ("time", str.isdigit), "workload": ("seconds", lambda first: first != "total")}


def _clean_text(text: str) -> str:
    lines, time_col = [], None
    for line in text.split("\n"):
        cells = line.split()
        if cells and cells[0] in TIMED_TABLES and TIMED_TABLES[cells[0]][0] in cells:  # a timed table's header
            column, is_row = TIMED_TABLES[cells[0]]
            time_col = cells.index(column)
        elif time_col is not None and len(cells) > time_col and is_row(cells[0]):
            if _is_number(cells[time_col]):
                line = _replace_cell(line, time_col)  # a row: its timing cell
        else:
            time_col = None
        lines.append(line)
    text = "\n".join(lines)
    for _, pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _replace_cell(line: str, index: int) -> str:
    """`line` with its `index`-th whitespace-separated cell replaced by the placeholder, the other
    cells where they were."""
    spans = [m.span() for m in re.finditer(r"\S+", line)]
    start, end = spans[index]
    return line[:start] + PLACEHOLDER + line[end:]


def clean(nb):
    """`nb` without stderr, timestamps, timings and temporary paths (in place; returned)."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.outputs:
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                continue
            if kept and out.get("output_type") == "stream" and kept[-1].get("output_type") == "stream":
                kept[-1]["text"] += out["text"]  # one stdout block, as Jupyter shows it (the epoch table's rows)
                continue
            kept.append(out)
        for out in kept:
            if "text" in out:
                out["text"] = _clean_text(out["text"])
            for mime, value in out.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    out["data"][mime] = _clean_text(value)
            out.get("metadata", {}).pop("execution", None)
        cell.outputs = kept
    return nb


def store(path: Path) -> None:
    import os

    import nbformat
    from nbclient import NotebookClient

    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend: figures are stored as images
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as cwd:
        NotebookClient(nb, kernel_name="python3", timeout=1200, resources={"metadata": {"path": cwd}}).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        raise SystemExit(f"{path.name}: a cell failed: {errors[0].get('ename')}: {errors[0].get('evalue')}")
    nbformat.write(clean(nb), path)
    print(f"stored {path.name} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(p.name for p in HERE.glob("*.ipynb"))
    for name in names:
        store(HERE / name)
