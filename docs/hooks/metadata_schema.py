"""The metadata schema of an exported model, generated at build time from the checks that enforce it.

The rules live in the model contract (hotstart/contract/: `schema.py`, and one check function per
task kind, ``contract.kinds.KINDS[kind].check``), each asking its checker for keys with
``need(key, ok, what, optional=False)``, where `what` is the sentence a `MetadataError` shows.
`kind_rows` runs each kind's check against a `KeyRecorder`, which writes those calls down instead
of checking a file: the page says exactly what the loader enforces, in the loader's own words.
`render` only needs ``{kind: [(key, what, optional)]}`` and the envelope rows.
"""
from __future__ import annotations

import md_table

# Keys every export carries, read before any kind's check (contract.schema.read_metadata,
# contract.kinds.check_metadata, contract.schema.check_against_model and export/metadata.task_metadata): (key, what it holds).
ENVELOPE = [
    ("format", "the file's format and version: `{format}` for ONNX (a `.pte` says `hotstart.pte/1`); "
               "anything else is refused as not a hotstart export"),
    ("kind", "the task kind, one of {kinds}; it selects the keys below"),
    ("hotstart_version", "the hotstart version that exported the model"),
    ("input_name", "the graph input's name (optional: else the first input); checked against the graph"),
    ("output_name", "the graph output's name"),
    ("task", "optional: the whole task as JSON, `task.to_dict()`, the same as a saved model's `task.json`"),
]


class KeySymbol(str):
    """What `KeyRecorder.need` returns for a key: it prints as the key's name in backticks and goes
    through the arithmetic, indexing and comparisons a check does with a value (a size limit, say)
    without deciding anything, so the check asks for every key it would ask a real file for."""

    def _same(self, *_):
        return self

    def _no(self, *_):
        return False

    __mul__ = __rmul__ = __add__ = __radd__ = __getitem__ = _same
    __gt__ = __ge__ = __lt__ = __le__ = _no


class KeyRecorder:
    """Stands where the contract's `Checker` stands and records each key a kind's check asks for.

    `need` returns the key's name in backticks where the real checker returns the value, so a
    description that depends on another key reads "a list of `channels` finite numbers"."""

    def __init__(self):
        self.rows: list[tuple[str, str, bool]] = []

    def need(self, key, ok, what, optional=False):
        self.rows.append((key, what, optional))
        return KeySymbol(f"`{key}`")

    def fail(self, key, problem):  # only called on a value, and the recorder has none
        raise AssertionError(f"a check failed on key {key!r} without a value: {problem}")


def kind_rows() -> dict[str, list[tuple[str, str, bool]]]:
    """{task kind: [(key, what, optional)]} as the contract's checks ask for them."""
    from hotstart.contract.kinds import KINDS

    rows = {}
    for kind, entry in KINDS.items():
        recorder = KeyRecorder()
        entry.check(recorder)
        rows[kind] = recorder.rows
    return rows


def file_io_rows() -> list[tuple[str, str, bool]]:
    """[(key, what, optional)] of the keys a file with its own input or output carries
    (`contract.schema.check_file_io`, read for every kind)."""
    from hotstart.contract.schema import check_file_io

    recorder = KeyRecorder()
    check_file_io(recorder)
    return recorder.rows


def render() -> str:
    from hotstart.contract.schema import FORMAT, JSON_KEYS, PLAIN_KEYS

    rows = kind_rows()
    kinds = list(rows)
    fmt = {"format": FORMAT, "kinds": ", ".join(f"`{k}`" for k in kinds)}

    def encoding(key: str) -> str:
        return "JSON" if key in JSON_KEYS else "text" if key in PLAIN_KEYS else "JSON (or text)"

    lines = ["# Saved model metadata", "",
             "What an exported model says about its task, so that a runtime without hotstart (the "
             "torch-free predictor, the web page, your C++ or Swift app) can prepare an input and read "
             "an output the way training did. Every value is a string; the keys marked JSON hold JSON. "
             "The file carries them as:", "",
             "- ONNX: `ModelProto.metadata_props`;",
             "- ExecuTorch `.pte`: the constant method `hotstart_metadata`, returning them as one JSON object "
             "(plus `batch_size`);",
             "- AOTInductor `.pt2`: the package metadata (`loader.get_metadata()`);",
             "- LiteRT `.tflite`: the flatbuffer's metadata entry `hotstart`, one JSON object (plus the file "
             "keys below);",
             "- IREE `.vmfb`: the `main` function's reflection attribute `hotstart_metadata`, one JSON object "
             "(plus `target_cpu`);",
             "- the web export: `task.json`, with the values as JSON.", "",
             "A saved model folder (`learner.save`) holds `task.json`: the `task` key below.", "",
             "This page is generated from the loader's own checks (`hotstart.contract.check_metadata`) "
             "when the site is built: a model whose metadata breaks a rule below is refused with an error "
             "naming the file and the key.", "",
             "## Every model", "", "| key | value | holds |", "|---|---|---|"]
    lines += [f"| `{key}` | {encoding(key)} | {md_table.cell(what.format(**fmt))} |" for key, what in ENVELOPE]
    keys = list(dict.fromkeys(key for kind in kinds for key, _, _ in rows[kind]))
    lines += ["", "## Per task kind", "",
              "**required** or *optional* in a model of that kind; blank: not read.", "",
              "| key | " + " | ".join(f"`{k}`" for k in kinds) + " |",
              "|---|" + "---|" * len(kinds)]
    for key in keys:
        cells = []
        for kind in kinds:
            found = [opt for k, _, opt in rows[kind] if k == key]
            cells.append("" if not found else "*optional*" if found[0] else "**required**")
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    lines += ["", "## What each key must hold", "", "| key | value | must be | in kinds |", "|---|---|---|---|"]
    for key in keys:
        by_what: dict[str, list[str]] = {}
        for kind in kinds:
            for k, what, _ in rows[kind]:
                if k == key:
                    by_what.setdefault(what, []).append(kind)
        for what, in_kinds in by_what.items():
            names = "all" if len(in_kinds) == len(kinds) else ", ".join(f"`{k}`" for k in in_kinds)
            lines.append(f"| `{key}` | {encoding(key)} | {md_table.cell(what)} | {names} |")
    lines += ["", "## Files with their own input or output", "",
              "A file whose input or output is not the encoded float32 batch says how it differs (a `.tflite` "
              "takes channels-last, possibly int8 input, one sample per call; a `.pte` a static batch; a "
              "`.vmfb` was compiled for one CPU). hotstart's runtime for the file applies these keys, so an "
              "app that uses it never handles a scale or a layout; an app with its own runtime applies them as "
              "described. Read for every kind (`hotstart.contract.schema.check_file_io`).", "",
              "| key | value | must be |", "|---|---|---|"]
    for key, what, _ in file_io_rows():
        lines.append(f"| `{key}` | {encoding(key)} | {md_table.cell(what)} |")
    lines.append("")
    return "\n".join(lines)
