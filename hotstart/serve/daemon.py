"""``hotstart serve``: start the server in the background, or in the foreground; ``--stop``, ``--status``.

In the background the server is ``python -m hotstart serve --foreground`` in a session of its own
(no terminal, so the terminal's Ctrl-C and hang-up are not its), with stdin from /dev/null and
its output in ``<runtime dir>/serve.log``; the command returns once the server answers, or prints
the log's end if it could not start.

The server starts with the client's ``sys.path`` (`server_command`), so that it imports the same
hotstart as the client wherever it is started. A plain ``python -m hotstart`` puts the working
folder first on ``sys.path``: started from the folder that holds a clone named ``hotstart``, it
imported the clone's root as a namespace package instead of the installed hotstart (an editable
install's finder comes after the path search), and the server died at start.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from . import client, paths
from .errors import ServeError
from .protocol import ProtocolError

START_TIMEOUT_S = 300.0  # the preload takes 5-15 s on a loaded 2-core machine


def ask(message: dict, path=None) -> tuple[dict | None, str | None]:
    """Send a control message (status / stop) to the server on `path` (the usual socket by default):
    (its answer, None), or (None, why there is none: no server, another user's, a refusal...)."""
    channel, why, _ = client.connect(path)
    if channel is None:
        return None, why
    with channel.sock:
        try:
            channel.send(message)
            reply = channel.receive()
        except (OSError, ProtocolError) as e:
            return None, f"the server did not answer ({e})"
    if reply is None:
        return None, "the server closed the connection without an answer"
    if "refused" in reply:
        return None, f"the server refused: {reply['refused']}"
    return reply, None


def stopping_statuses() -> list[dict]:
    """The status of each server that is stopping (its socket moved aside, its runs still going)."""
    found = []
    for path in paths.stopping_socket_paths(paths.runtime_dir()):
        reply, _ = ask({"status": True}, path)
        if reply and "status" in reply:
            found.append(reply["status"])
    return found


def start_foreground(idle_timeout: float, preload_names) -> int:
    from .server import Server

    path = paths.socket_path()
    server = Server(path, idle_timeout=idle_timeout, preload_names=preload_names)
    server.prepare()
    server.serve_forever()
    # The server did no work of its own: skip the interpreter's teardown of ~4,000 preloaded modules
    # (seconds on a loaded machine) and of atexit handlers registered by libraries it never used.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# what `python -m hotstart ARGS` does, with this process's sys.path (argv[1], JSON) in place of python's
_WITH_OUR_SYS_PATH = ("import json, runpy, sys; sys.path[:] = json.loads(sys.argv.pop(1)); "
                      "runpy.run_module('hotstart', run_name='__main__', alter_sys=True)")


def server_command(args: list[str]) -> list[str]:
    """``python -m hotstart ARGS`` that imports this process's hotstart, wherever it is started."""
    return [sys.executable, "-c", _WITH_OUR_SYS_PATH, json.dumps(sys.path), *args]


def start_background(idle_timeout: float, preload_names) -> int:
    status, _ = ask({"status": True})
    if status and "status" in status:
        print(f"hotstart serve: already running (pid {status['status']['pid']}, {status['status']['socket']})")
        return 0
    folder = paths.runtime_dir()
    paths.ensure_private_dir(folder)
    log = paths.log_path()
    cmd = server_command(["serve", "--foreground", "--idle", str(idle_timeout), "--preload", ",".join(preload_names)])
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-15:]
            raise ServeError(f"the server exited with status {proc.returncode} while starting; "
                             f"the end of {log}:\n" + "\n".join(tail))
        reply = ask({"status": True})[0] if paths.socket_path().exists() else None
        if reply and "status" in reply and reply["status"]["pid"] == proc.pid:
            s = reply["status"]
            print(f"hotstart serve: pid {s['pid']} on {s['socket']}; preloaded {s['modules']} modules in "
                  f"{s['preload_s']:.1f} s; exits after {idle_timeout:.0f} s idle; log {log}")
            return 0
        time.sleep(0.1)
    proc.kill()
    raise ServeError(f"the server did not answer within {START_TIMEOUT_S:.0f} s; see {log}")


def stop() -> int:
    reply, why = ask({"stop": True})
    if reply is None:
        stopping = stopping_statuses()
        for s in stopping:
            print(f"hotstart serve: pid {s['pid']} is already stopping; it exits once its {len(s['runs'])} run(s) end")
        if stopping:
            return 0
        print(f"hotstart serve: {why}")
        return 1
    pid = reply["stopping"]
    runs = reply.get("runs", 0)
    print(f"hotstart serve: stopping pid {pid}" + (f" once its {runs} run(s) end" if runs else ""))
    return 0


def status() -> int:
    reply, why = ask({"status": True})
    shown = ([reply["status"]] if reply and "status" in reply else []) + stopping_statuses()
    if not shown:
        print(f"hotstart serve: {why or 'no answer'}")
        return 1
    for s in shown:
        _print_status(s)
    return 0


def _print_status(s: dict) -> None:
    m = s["memory"]
    idle = "-" if s["idle_left_s"] is None else f"{s['idle_left_s']:.0f} s"
    state = (f"stopping: exits once its {len(s['runs'])} run(s) end" if s.get("stopping")
             else f"idle exit in {idle}")
    print(f"pid {s['pid']} on {s['socket']}, up {s['uptime_s']:.0f} s, {s['served']} runs served, {state}")
    print(f"preloaded {s['modules']} modules in {s['preload_s']:.1f} s: {', '.join(s['preloaded'])}")
    print(f"memory: RSS {m['rss_mib']:.0f} MiB, PSS {m['pss_mib']:.0f} MiB, private {m['private_mib']:.0f} MiB")
    for r in s["runs"]:
        mem = r["memory"] or {}
        print(f"  run {r['pid']}: {' '.join(r['argv'])} ({r['running_s']:.0f} s; PSS {mem.get('pss_mib', 0):.0f} MiB, "
              f"private {mem.get('private_mib', 0):.0f} MiB)")
