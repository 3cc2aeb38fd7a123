"""`check_processes_agree`: the processes of a run refuse, together, a fit they do not agree on.

Every process runs the same loop, and their collectives (the gradients' all-reduce, the guard's
and the metrics' sums, the checkpoint barrier) meet only if each process runs the same fit: the
same optimizer steps (batches per epoch, epochs, accumulation), the same checkpoint to resume
from, the same seed and schedule. A process with another batch size or number of epochs, or with
a checkpoint folder that the others do not see (one finds a checkpoint to resume from, another
does not), waited for the others in a collective they never reached, until gloo's 30-minute
timeout, and then failed with a message about a socket. So when a fit starts, the processes
exchange a small fingerprint of it (`fit_fingerprint`), and if any field differs every process
raises the same `UsageError`, naming each field that differs and each process's value.

Cost: one collective per fit, of a few int64 per process. Each field is one int64 (a count as it
is; a text, such as the schedule's JSON or the checkpoint's name, as 63 bits of its SHA-256);
each process writes its own row of a processes x fields table of zeros, and the table is summed
over the processes (``Backend.sum_tensors``, exact in int64): an all-gather through the one
collective every backend has. Only when rows differ (the run is stopping anyway) does a second
collective carry the texts that differ (their first `TEXT_BYTES` bytes), for the message.
"""
from __future__ import annotations

import hashlib
import json

import torch

from ..errors import UsageError

TEXT_BYTES = 240
"""How much of each process's text (a checkpoint's name, a schedule, an error) a refusal shows."""

COUNTS = ("batches per epoch", "epochs", "accumulate", "optimizer steps in all", "fit index")
"""The fields of `fit_fingerprint` that are integers; the others are texts."""

HINTS = {
    "batches per epoch": "another batch size or training set on some process?",
    "optimizer steps in all": "another batch size, training set, number of epochs or accumulate?",
    "seed": "pass the same seed= to every process",
    "checkpoint to resume from": "the checkpoint folder must be one folder that every process sees: a shared "
                                 "file system, the same path",
    "schedule": "the same learning rate and schedule on every process",
}
"""Why a field may differ, said after its values in a refusal."""


def fit_fingerprint(learner, fit_state, checkpoint=None, resume_error: BaseException | None = None) -> dict:
    """What every process must agree on when `fit_state`'s fit starts: field name -> value (an int
    for the `COUNTS`, else a text). `checkpoint` is the `CheckpointState` this process found to
    resume from (None: none); `resume_error` what reading it raised on this process."""
    if resume_error is not None:
        found = f"none: {type(resume_error).__name__}: {resume_error}"
    else:
        found = "none" if checkpoint is None else checkpoint.path.name
    return {"batches per epoch": fit_state.n_iter, "epochs": fit_state.n_epoch, "accumulate": fit_state.accumulate,
            "optimizer steps in all": fit_state.total_steps, "fit index": fit_state.fit_index,
            "seed": str(learner.seed), "checkpoint to resume from": found,
            "schedule": json.dumps(fit_state.schedule_identity(), sort_keys=True)}


def check_processes_agree(backend, fingerprint: dict, cause: BaseException | None = None) -> None:
    """Raise the same `UsageError` on every process when their `fingerprint`s differ (a collective:
    every process calls it, with the same fields); nothing in one process. `cause`, this process's
    own error that made its fingerprint differ, is chained to the refusal."""
    world = backend.world_size
    if world == 1:
        return
    names = list(fingerprint)
    mine = [int(fingerprint[n]) if n in COUNTS else _digest(str(fingerprint[n])) for n in names]
    rows = _gather(backend, torch.tensor(mine, dtype=torch.int64))
    differ = [i for i, n in enumerate(names) if len({row[i] for row in rows}) > 1]
    if not differ:
        return
    texts = [n for n in (names[i] for i in differ) if n not in COUNTS]
    shown = dict(zip(texts, _gather_texts(backend, [str(fingerprint[n]) for n in texts])))
    parts = []
    for i in differ:
        name = names[i]
        values = shown[name] if name in shown else [str(row[i]) for row in rows]
        hint = f" ({HINTS[name]})" if name in HINTS else ""
        parts.append(f"{name}: {_by_value(values)}{hint}")
    raise UsageError(f"the {world} processes of this run disagree about this fit, and would wait for each other "
                     f"until the collective's timeout: {'; '.join(parts)}. Every process must run the same fit "
                     f"(the same script, arguments and data, and a checkpoint folder they all see); this is rank "
                     f"{backend.global_rank}") from cause


def _digest(text: str) -> int:
    """63 bits of `text`'s SHA-256, as an int64."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def _gather(backend, mine: torch.Tensor) -> list[list[int]]:
    """Every process's `mine` (a 1-d int64 tensor of the same length everywhere), in rank order."""
    table = torch.zeros(backend.world_size, len(mine), dtype=torch.int64, device=backend.device)
    table[backend.global_rank] = mine.to(backend.device)
    (summed,) = backend.sum_tensors([table])  # the others' rows are zeros here: the sum is every row, exactly
    return summed.cpu().tolist()


def _gather_texts(backend, texts: list[str]) -> list[list[str]]:
    """For each of `texts` (the same count everywhere), every process's text, in rank order (the
    first `TEXT_BYTES` bytes of its UTF-8)."""
    if not texts:
        return []
    codes = torch.zeros(len(texts), TEXT_BYTES, dtype=torch.int64)
    for i, text in enumerate(texts):
        data = text.encode()[:TEXT_BYTES]
        codes[i, :len(data)] = torch.tensor(list(data), dtype=torch.int64)
    rows = _gather(backend, codes.reshape(-1))
    return [[bytes(b for b in row[i * TEXT_BYTES:(i + 1) * TEXT_BYTES] if b).decode(errors="replace")
             for row in rows] for i in range(len(texts))]


def _by_value(values: list[str]) -> str:
    """``"2 on rank 0, 4 on ranks 1-3"``: each value with the ranks that hold it."""
    ranks: dict = {}
    for r, v in enumerate(values):
        ranks.setdefault(v, []).append(r)
    return ", ".join(f"{v} on {_ranks(rs)}" for v, rs in ranks.items())


def _ranks(rs: list[int]) -> str:
    spans, start = [], rs[0]
    for a, b in zip(rs, [*rs[1:], None]):
        if b != a + 1:
            spans.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ("rank " if len(rs) == 1 else "ranks ") + ", ".join(spans)
