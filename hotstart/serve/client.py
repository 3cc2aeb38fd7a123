"""The client: ``hotstart run script.py args...``, and the hand-off of ``hotstart train`` / ``predict``.

`run_served` connects to the server, checks that the server is this user's (SO_PEERCRED), sends
the run (argv, cwd, environment, umask, and stdin / stdout / stderr as descriptors), forwards
the signals this process receives to the child, and returns the child's exit status. It returns
None, after one line on stderr that says why, when the run must happen here instead: no server,
a stale socket, another user's server, a server that refuses (another Python, hotstart, torch
or start-up environment; a preloaded module changed on disk), or other work in this session that
would yield to a run here but competes as an equal with a served one (`autogroup`: the kernel's
sched_autogroup shares CPU between sessions first, and a served run is a session of its own).

`exit_like` ends this process the way the child ended: with its exit code, or by the same signal.

Opt out: ``HOTSTART_SERVER=0``, or ``--no-server`` (``hotstart run --no-server ...``,
``hotstart train --no-server ...``). ``HOTSTART_SERVER=always`` serves even beside such work.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
from pathlib import Path

from . import autogroup, checks, paths, protocol, runner
from .run_process import RunProcess, stop_orphaned_run
from .child import SERVED_ENV
from .errors import ServeError

# what a terminal or a job control sends that the child should get too
FORWARD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
           signal.SIGWINCH, signal.SIGCONT, signal.SIGALRM)
NO_SERVER_FLAG = "--no-server"
HANDED_OFF = ("train", "predict")  # hotstart commands that go to the server when one runs
# handed-off commands that are mostly start-up: served even beside other work in the session, since
# a served `hotstart predict` takes 0.5-1.3 s against 4-17 s direct (benchmarks/serve.py), and half
# the CPU cannot undo that
MOSTLY_START_UP = ("predict",)


def server_wanted() -> bool:
    """False under HOTSTART_SERVER=0 (or false/no/off), and in a served child itself."""
    if os.environ.get("HOTSTART_SERVER", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    return os.environ.get(SERVED_ENV) != str(os.getpid())


def server_forced() -> bool:
    """HOTSTART_SERVER=always: serve even when other work in this session would slow a served run."""
    return os.environ.get("HOTSTART_SERVER", "").strip().lower() == "always"


def say(msg: str) -> None:
    print(f"hotstart: {msg}", file=sys.stderr, flush=True)


def connect(path: Path | None = None) -> tuple[protocol.Channel | None, str | None, bool]:
    """(channel, None, _) when a server of ours listens on `path` (the usual socket by default);
    else (None, why not, whether a socket file exists)."""
    if path is None:
        try:
            path = paths.socket_path()
        except ServeError as e:
            return None, str(e), False
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except FileNotFoundError:
        sock.close()
        return None, f"no server is running (no socket at {path}; start one with `hotstart serve`)", False
    except ConnectionRefusedError:
        sock.close()
        return None, (f"stale socket {path}: no server listens on it (the server died; "
                      f"`hotstart serve` starts a new one)"), True
    except PermissionError:
        sock.close()
        return None, not_yours(path), True
    except OSError as e:
        sock.close()
        return None, f"cannot connect to {path}: {e.strerror or e}", True
    _, uid, _ = protocol.peer_credentials(sock)
    if uid != os.getuid():
        sock.close()
        return None, f"the server on {path} runs as uid {uid}, not as you (uid {os.getuid()}): it is not yours", True
    return protocol.Channel(sock), None, True


def not_yours(path: Path) -> str:
    """Why the socket `path`, which we may not connect to, is not ours: who owns it, or its folder."""
    for owned in (path, path.parent):
        try:
            owner = owned.stat().st_uid
        except OSError:
            continue
        if owner != os.getuid():
            return (f"{owned} belongs to uid {owner}, not to you (uid {os.getuid()}): another user's server "
                    f"is not yours to use or stop (set HOTSTART_RUNTIME_DIR to a folder of your own)")
    return f"no permission to connect to {path}"


def request(kind: str, target: str, args: list[str]) -> dict:
    umask = os.umask(0)
    os.umask(umask)
    return {"run": {"kind": kind, "target": target, "args": list(args), "cwd": os.getcwd(),
                    "env": dict(os.environ), "umask": umask},
            "identity": checks.identity()}


def run_served(kind: str, target: str, args: list[str], *, quiet_if_absent: bool = False,
               mind_the_session: bool = True) -> int | None:
    """Run ``python target args`` (kind "script") or ``python -m target args`` (kind "module") in
    the server; the exit code (negative: the signal that ended it), or None to run it here. With
    `mind_the_session`, not when the run would get less CPU served than here (`autogroup`)."""
    channel, why, socket_exists = connect()
    if channel is None:
        if not (quiet_if_absent and not socket_exists):
            say(f"{why}; running without the server")
        return None
    with channel.sock:
        busy = autogroup.why_run_directly() if mind_the_session and not server_forced() else None
        if busy:
            say(busy)
            return None
        try:
            channel.send(request(kind, target, args), fds=[0, 1, 2])
            reply = channel.receive()
        except (OSError, protocol.ProtocolError) as e:
            say(f"the server did not answer ({e}); running without the server")
            return None
        if reply is None or "refused" in reply:
            why = reply["refused"] if reply else "the server closed the connection"
            say(f"not using the server: {why}; running without it")
            return None
        return _wait(channel, RunProcess(int(reply["started"])))


def _wait(channel: protocol.Channel, run: RunProcess) -> int:
    """Forward our signals until the server reports the exit status. If the server dies first,
    stop the run and wait for it (`run_process`): no run outlives its client unseen."""
    def forward(signum, frame):
        try:
            channel.send({"signal": signum})
        except OSError:
            pass

    previous = {sig: signal.signal(sig, forward) for sig in FORWARD}
    try:
        code = _exit_status(channel)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    try:
        return code if code is not None else stop_orphaned_run(run, say, FORWARD)
    finally:
        run.close()


def _exit_status(channel: protocol.Channel) -> int | None:
    """The run's exit status as the server reports it; None if the server went away first."""
    while True:
        try:
            msg = channel.receive()
        except (OSError, protocol.ProtocolError) as e:
            say(f"lost the server during the run: {e}")
            return None
        if msg is None:
            return None
        if "exit" in msg:
            return int(msg["exit"])


def exit_like(code: int) -> int:
    """For a negative `code` (killed by signal -code), end this process by that signal, so that our
    parent sees what it would have seen from ``python script.py``; else return `code`."""
    if code >= 0:
        return code
    sys.stdout.flush()
    sys.stderr.flush()
    sig = -code
    signal.signal(sig, signal.SIG_DFL)
    if sig == signal.SIGSEGV or sig == signal.SIGABRT:  # no core file of the client: the child's was the crash
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    os.kill(os.getpid(), sig)
    return 128 + sig  # only if the signal does not end a process


def strip_no_server(argv: list[str]) -> tuple[list[str], bool]:
    """(argv without ``--no-server``, whether it was there)."""
    if NO_SERVER_FLAG in argv:
        return [a for a in argv if a != NO_SERVER_FLAG], True
    return list(argv), False


def hand_off(argv: list[str]) -> tuple[list[str], int | None]:
    """A ``hotstart ...`` command line: (argv without ``--no-server``, the status to exit with if a
    running server took the run, else None: go on in this process). Only ``train`` and ``predict``
    are handed off; silent when no server runs at all, one line when one exists but cannot be used."""
    if not argv or argv[0] not in HANDED_OFF:
        return argv, None
    argv, no_server = strip_no_server(argv)
    if no_server or not server_wanted():
        return argv, None
    code = run_served("module", "hotstart", argv, quiet_if_absent=True, mind_the_session=argv[0] not in MOSTLY_START_UP)
    return argv, None if code is None else exit_like(code)


def run_command(kind: str, target: str, args: list[str], *, no_server: bool = False) -> int:
    """``hotstart run``: in the server when one can take it, else in this process; the exit status."""
    if not no_server and server_wanted():
        code = run_served(kind, target, args)
        if code is not None:
            return exit_like(code)
    run = runner.run_module if kind == "module" else runner.run_script
    return exit_like(run(target, list(args)))
