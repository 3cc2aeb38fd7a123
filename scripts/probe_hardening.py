"""Probes of issue 32's kinds ("Hardening, round four"): one bad input or fault per kind, as a user
would meet it, and what hotstart must say or do. Each probe prints one line; the exit status is 1
if any failed.

    python scripts/probe_hardening.py            # all probes, a few seconds
    python scripts/probe_hardening.py --only ts  # the probes whose name holds "ts"

tests/test_probe_hardening.py runs them all in the suite, so CI runs them. The tests of each
module hold the cases in full; a probe is the shortest demonstration that its kind is handled.
Every probe works in a temporary folder and leaves the process's global state as it found it.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

PROBES: dict[str, Callable[[Path], str]] = {}


def probe(name: str):
    """Register a probe: a function of a fresh temporary folder that raises AssertionError when the
    kind is not handled, and returns one line saying what it saw."""
    def register(fn):
        PROBES[name] = fn
        return fn
    return register


def raised(kind, fn, *args, **kwargs) -> str:
    """The message of the `kind` error that fn(...) must raise."""
    try:
        fn(*args, **kwargs)
    except kind as e:
        return str(e)
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {kind.__name__}")


# --- the warm server ---------------------------------------------------------------------------

@probe("serve: each run draws fresh random numbers")
def _serve_fresh_random(tmp: Path) -> str:
    import torch  # noqa: F401 - loaded, as in the server: its generator is the one to reseed

    from hotstart.serve import fresh_random

    draws = []
    for _ in range(2):  # two forks of this process, as the server forks two runs
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                import numpy as np
                import torch

                fresh_random.reseed()
                os.write(w, json.dumps([torch.rand(1).item(), float(np.random.rand())]).encode())
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            draws.append(json.loads(f.read()))
        os.waitpid(pid, 0)
    assert draws[0][0] != draws[1][0] and draws[0][1] != draws[1][1], draws
    return f"two forks drew torch {draws[0][0]:.4f} / {draws[1][0]:.4f}, numpy {draws[0][1]:.4f} / {draws[1][1]:.4f}"


@probe("serve: every start-up variable prefix is checked")
def _serve_startup_env(tmp: Path) -> str:
    from hotstart.serve import checks

    named = []
    for prefix in checks.STARTUP_ENV_PREFIXES:
        key = prefix if prefix in ("LANG", "VIRTUAL_ENV") else prefix + "PROBE"
        reason = checks.env_mismatch({key: "server"}, {key: "client"})
        assert reason and reason.startswith(key), (prefix, reason)
        named.append(prefix)
    return f"{len(named)} prefixes named when they differ: {', '.join(named)}"


@probe("serve: another user's server is not yours, a stopping one is still found")
def _serve_not_yours(tmp: Path) -> str:
    from hotstart.serve import client, paths

    said = []
    if os.getuid() == 0:
        theirs = tmp / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        why = client.not_yours(theirs / paths.SOCKET_NAME)
        assert "belongs to uid 65534, not to you" in why, why
        said.append("uid 65534's folder: not yours")
    import socket

    aside = paths.stopping_socket_path(tmp, 4242)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener:
        listener.bind(str(aside))
        listener.listen(1)
        assert paths.stopping_socket_paths(tmp) == [aside]
    said.append(f"a stopping server's socket found at {aside.name}")
    return "; ".join(said)


@probe("serve: the server imports the client's hotstart wherever it starts")
def _serve_same_hotstart(tmp: Path) -> str:
    from hotstart.serve import daemon

    cmd = daemon.server_command(["serve", "--foreground"])
    assert json.loads(cmd[3]) == sys.path and cmd[1] == "-c", cmd
    return f"the server starts with this process's sys.path ({len(sys.path)} entries), not the working folder"


# --- progressive resizing ----------------------------------------------------------------------

@probe("resize: a size the model cannot take is refused as tasklearner refuses it")
def _resize(tmp: Path) -> str:
    from types import SimpleNamespace

    import torch

    from hotstart import Image, ImageClassificationSingle, Label
    from hotstart.learner.resize import task_at_size
    from hotstart.tasks.checks import ModelTaskMismatch

    task = ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=(8, 8), augment=False)
    conv = lambda: torch.nn.Conv2d(1, 1, 3, stride=2, padding=1)  # noqa: E731
    model = torch.nn.Sequential(conv(), conv(), conv(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(1, 2))  # downsamples by 8
    learner = SimpleNamespace(task=task, task_model=lambda: model)
    said = raised(ModelTaskMismatch, task_at_size, learner, (4, 4), argument="set_size((4, 4))")
    assert said.startswith("set_size((4, 4)): ") and "4x4 is too small" in said, said
    return said[:110] + "..."


# --- the resized-image cache -------------------------------------------------------------------

@probe("resized cache: a file replaced with its old size and mtime is not served stale")
def _resized_stale(tmp: Path) -> str:
    import numpy as np
    from PIL import Image

    from hotstart.datasets.images import load_image
    from hotstart.datasets.resized_cache import resized_copy

    path = tmp / "img.png"
    Image.fromarray(np.full((30, 40, 3), 10, np.uint8)).save(path, compress_level=0)
    st = os.stat(path)
    old = resized_copy([path], (16, 16), root=tmp / "cache")
    Image.fromarray(np.full((30, 40, 3), 250, np.uint8)).save(path, compress_level=0)  # same byte size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p, rsync -t and tar x put it back
    assert os.stat(path).st_size == st.st_size
    new = resized_copy([path], (16, 16), root=tmp / "cache")
    value = int(np.asarray(load_image(new[0])).mean())
    assert value == 250, value
    assert os.path.exists(old[0]), "the copy still in use (held by `old`) was pruned"
    return "the new content is read (250, not the old 10), and the old copy, still held, is kept"


# --- time-series files -------------------------------------------------------------------------

@probe("ts files: contradictions, NAN, a BOM, a misread header, a NaN target, unreadable labels")
def _ts(tmp: Path) -> str:
    import math

    from hotstart.datasets import DatasetError, TSFormatError, read_ts, write_ts

    p = tmp / "x.ts"
    p.write_text("@univariate true\n@dimensions 3\n@classLabel true a\n@data\n1:2:3:a\n")
    assert f"{p}:1 (and line 2)" in raised(TSFormatError, read_ts, p)
    p.write_bytes(b"\xef\xbb\xbf@classLabel\ttrue a\n@data\n1,NAN,-nan:a\n")  # BOM, tab, NaN spellings
    f = read_ts(p)
    assert f.labels == ["a"] and math.isnan(f.series[0][0, 1]) and math.isnan(f.series[0][0, 2])
    p.write_text("@classLabel false\n@targetLabel true\n@data\n1,2:NaN\n")
    assert f"{p}:4: the regression target 'NaN' is not a finite number" in raised(TSFormatError, read_ts, p)
    said = raised(DatasetError, write_ts, tmp / "y.ts", [[[1.0, 2.0]]], labels=["two words"])
    assert "labels[0] = 'two words'" in said, said
    return "header lines named, NAN / BOM / tab read, NaN target and 'two words' label refused"


# --- tables ------------------------------------------------------------------------------------

@probe("tables: a 1e308 cell is named by file, line and column")
def _table_huge(tmp: Path) -> str:
    from hotstart.datasets import DatasetError, TableData

    p = tmp / "t.csv"
    p.write_text("x,y,label\n" + "".join(f"{1e308 if i == 4 else i * 0.5},{i % 7},{'ab'[i % 2]}\n" for i in range(30)))
    said = raised(DatasetError, TableData, p, target="label")
    assert "continuous column 'x'" in said and "line 6" in said and str(p) in said, said
    return said[:120] + "..."


# --- recipes -----------------------------------------------------------------------------------

@probe("mixup: every image of an odd batch is mixed, a batch of one is refused")
def _mixup(tmp: Path) -> str:
    from types import SimpleNamespace

    import torch
    from timm.data import Mixup

    from hotstart import Image, ImageClassificationSingle, Label
    from hotstart.errors import UsageError
    from hotstart.learner.callbacks.mixup import MixUp, mix_batch

    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(3, 1, 4, 4, generator=g), torch.tensor([0, 1, 2])
    mixed, _ = mix_batch(Mixup(mixup_alpha=0.8, num_classes=3), x, y, seed=1)
    unmixed = [i for i in range(3) if torch.equal(mixed[i], x[i])]
    assert unmixed == [], unmixed
    callback = MixUp()
    task = ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=(8, 8), augment=False)
    callback.learner = SimpleNamespace(task=task, train_loader=SimpleNamespace(batch_size=1))
    assert "batch_size=1" in raised(UsageError, callback.before_fit)
    return "batch of 3: all 3 mixed (before: the last one kept as it was); batch_size=1 refused"


# --- caches ------------------------------------------------------------------------------------

@probe("caches: a cache that cannot be written names its folder and variable")
def _cache_write(tmp: Path) -> str:
    from hotstart.cache_writes import CacheWriteError
    from hotstart.compile_cache.manifest import mark_cache
    from hotstart.datasets.download import download

    blocked = tmp / "a-file"
    blocked.write_text("not a folder")
    source = tmp / "data.bin"
    source.write_bytes(b"x" * 1000)
    with _env(HOTSTART_DATA_DIR=str(blocked / "data")):
        said = raised(CacheWriteError, download, source.as_uri(), None, progress=False)
    assert str(blocked / "data") in said and "HOTSTART_DATA_DIR" in said, said
    said2 = raised(CacheWriteError, mark_cache, blocked / "compile")
    assert str(blocked / "compile") in said2 and "HOTSTART_CACHE_DIR" in said2, said2
    return said[:110] + "..."


@probe("warmup: --clear with a damaged manifest says what is wrong with it")
def _warmup_clear(tmp: Path) -> str:
    import io

    from hotstart.warmup.__main__ import main

    (tmp / "inductor").mkdir()
    (tmp / "manifest.json").write_text('{"format": "hotstart.warmup/1", "entr')
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--cache-dir", str(tmp), "--clear"])
    said = err.getvalue()
    assert code == 2 and "manifest.json is not valid JSON" in said and "no manifest.json" not in said, said
    return "refused, naming the damaged manifest (not 'there is no manifest.json')"


# --- the training hint -------------------------------------------------------------------------

@probe("hint: enough steps at chance is not told to take more steps")
def _hint(tmp: Path) -> str:
    from hotstart.learner.callbacks.training_hint import AT_CHANCE, FEW_STEPS, fit_hint

    falling = [1.1 - i / 100 for i in range(90)]
    first, second = fit_hint(5, 5, 0.28, 3, falling[:5]), fit_hint(90, 10, 0.333, 3, falling)
    assert first.kind == FEW_STEPS and second.kind == AT_CHANCE, (first, second)
    assert "unlikely to change" in second.reason
    return "5 steps: more steps; 90 steps at chance: labels, learning rate, pretrained (not more steps)"


# --- running -----------------------------------------------------------------------------------

@contextlib.contextmanager
def _env(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_probes(only: str | None = None) -> list[tuple[str, bool, str]]:
    """Run the probes (those whose name holds `only`): (name, passed, what it saw or why it failed)."""
    results = []
    for name, fn in PROBES.items():
        if only and only not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="probe-") as d:
            start = time.perf_counter()
            try:
                said, ok = fn(Path(d)), True
            except Exception as e:  # noqa: BLE001 - a probe's failure is its report
                said, ok = f"{type(e).__name__}: {e}", False
            results.append((name, ok, f"{said} ({time.perf_counter() - start:.2f} s)"))
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=None, help="run only the probes whose name holds this text")
    args = p.parse_args(argv)
    results = run_probes(args.only)
    for name, ok, said in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {said}")
    return 0 if results and all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
