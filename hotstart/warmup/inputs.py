"""`describe_input`: what a workload's model is fed, in words, for ``python -m hotstart.warmup --list``.

Read from the task the workload builds, not from the workload's `size`: `size` is what the compile
cache's key names (an image's height and width), and a table or a series has none. Showing
``size=1x1`` for a table of 7 columns, or ``1x96`` for 3 channels of 96 steps, said nothing true.
Building the built-in tasks takes milliseconds (no data, no model), so ``--list`` builds each one.
"""
from __future__ import annotations


def describe_input(task) -> str:
    """The input of `task` (its `input_block`), one short phrase: an image's channels and the size the
    task resizes to, a table's columns, a series' channels and length; any other block by its repr."""
    from ..blocks import Image, TableRow, TimeSeries
    from ..blocks.encoded import ImageTensor

    block = task.input_block
    if isinstance(block, Image):
        encoded = task.encoded_blocks()[0]  # the model's input: the size the task resizes to, its channels
        size = encoded.size if isinstance(encoded, ImageTensor) else block.size
        channels = encoded.channels if isinstance(encoded, ImageTensor) else block.channels
        hw = f" {size[0]}x{size[1]}" if size else ""
        return f"image {channels}ch{hw}" if channels else f"image{hw}"
    if isinstance(block, TableRow):
        parts = [f"{len(names)} {kind} ({', '.join(names)})"
                 for kind, names in (("categorical", block.categorical), ("continuous", block.continuous)) if names]
        return f"table row: {' + '.join(parts)} columns"
    if isinstance(block, TimeSeries):
        if block.length is not None:
            length = f"{block.length} steps"
        elif block.max_length is not None:
            length = f"up to {block.max_length} steps"
        else:
            length = "any length"
        return f"series: {block.channels} channel{'' if block.channels == 1 else 's'} x {length}"
    return repr(block)


def workload_input(workload) -> str:
    """`describe_input` of the task `workload` builds; a task that cannot be built (a user's factory
    that raises) is said so, in one line, instead of failing the whole listing."""
    try:
        task = workload.task()
    except Exception as e:  # a user's factory: ``--list`` still lists the others
        return f"? (its task() raised {type(e).__name__}: {e})"[:160]
    return describe_input(task)
