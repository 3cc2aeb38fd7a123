"""Text for one cell of a Markdown table (the generated pages' tables)."""
from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def cell(text: str) -> str:
    """`text` on one line, its pipes escaped outside code spans (Python-Markdown's tables leave a
    pipe inside backticks alone, and would show the backslash there)."""
    text = " ".join(text.split())
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [text[last:span.start()].replace("|", "\\|"), span.group(0)]
        last = span.end()
    out.append(text[last:].replace("|", "\\|"))
    return "".join(out)
