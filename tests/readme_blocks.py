"""The README's Python blocks, and a runner that executes them in a fresh process.

    python tests/readme_blocks.py README.md

runs every block in order, each in its own namespace (as ``exec`` with ``__name__ == "readme"``,
what a reader pasting it into a new file gets), with its stdout captured, and prints one JSON line
per block: its index, whether it printed anything, and the traceback if it raised. Run by
tests/test_readme.py as a prestart job (tests/prestart.py), so the blocks train in the background.
"""
from __future__ import annotations

import re
from pathlib import Path


def python_blocks(readme: Path) -> list[str]:
    """The source of each ```python fenced block, in order."""
    return re.findall(r"```python\n(.*?)```", Path(readme).read_text(), flags=re.S)


def main(readme: str) -> None:
    import contextlib
    import io
    import json
    import sys
    import traceback

    for index, source in enumerate(python_blocks(Path(readme))):
        out, error = io.StringIO(), None
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(source, f"README.md[python block {index}]", "exec"), {"__name__": "readme"})
        except BaseException:  # noqa: B902 - reported for the test to show, whatever it was
            error = traceback.format_exc()
        print(json.dumps({"index": index, "printed": out.getvalue(), "error": error}), flush=True)
        sys.stdout.flush()


if __name__ == "__main__":
    import sys

    main(sys.argv[1])
