"""The Python blocks of the README and of the guide's pages, and a runner that executes them.

    python tests/readme_blocks.py README.md docs/guide/data.md ...

runs every block of each file in order, all in one fresh process, each block in its own namespace
(as ``exec`` with ``__name__ == "readme"``, what a reader pasting it into a new file gets), with its
stdout captured, and prints one JSON line per block: its file, its index in that file, what it
printed, and the traceback if it raised. Run by tests/test_readme.py as a prestart job
(tests/prestart.py), so the blocks train in the background.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def executed_pages(root: Path = ROOT) -> list[Path]:
    """The pages whose Python blocks must run as written: the README, then the guide's pages
    (docs/guide/, the Python API tutorial that moved out of the README), in name order."""
    return [root / "README.md", *sorted((root / "docs" / "guide").glob("*.md"))]


def python_blocks(page: Path) -> list[str]:
    """The source of each ```python fenced block, in order."""
    return re.findall(r"```python\n(.*?)```", Path(page).read_text(), flags=re.S)


def stated_outputs(source: str) -> list[str]:
    """What a block says its prints print: the text after ``# ->`` on a line (``print(x)  # -> 0.9...``),
    in order. ``...`` in it stands for any text (numbers that differ between machines)."""
    return [m.strip() for m in re.findall(r"#\s*->\s*(.+)$", source, flags=re.M)]


def matches_stated(stated: str, printed: str) -> bool:
    """Whether some printed line is `stated`, with each ``...`` standing for any text."""
    pattern = ".*?".join(re.escape(part) for part in stated.split("..."))
    return any(re.fullmatch(pattern, line.strip()) for line in printed.splitlines())


def main(pages: list[str]) -> None:
    import contextlib
    import io
    import json
    import sys
    import traceback

    for page in pages:
        name = Path(page).resolve().relative_to(ROOT).as_posix() if Path(page).resolve().is_relative_to(ROOT) \
            else str(page)
        for index, source in enumerate(python_blocks(Path(page))):
            out, error = io.StringIO(), None
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(source, f"{name}[python block {index}]", "exec"), {"__name__": "readme"})
            except BaseException:  # noqa: B902 - reported for the test to show, whatever it was
                error = traceback.format_exc()
            print(json.dumps({"file": name, "index": index, "printed": out.getvalue(), "error": error}), flush=True)
            sys.stdout.flush()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
