"""Turn a fresh fork of the server into the client's process, then run the client's script in it.

The child takes the client's stdin / stdout / stderr (the descriptors that came over the socket),
working folder, environment and umask; gets a session of its own (so the server's signals and
terminal are not its, and the server can signal the run's whole process group: DataLoader workers
and DDP ranks included); puts back the signal dispositions a fresh Python has; is sent SIGTERM
if the server dies before the run ends; and reseeds the random generators that the server
imported (`fresh_random`), so that runs do not share numbers. Then
`runner` runs the script and `runner.end_process` exits with its status; the child never returns
into the server's code.
"""
from __future__ import annotations

import io
import os
import signal
import sys

from . import fresh_random, runner

# set in a served child to its own pid: `client.hand_off` in this very process must not forward
# again, while processes it starts (Fabric's other ranks) may use the server like any client
SERVED_ENV = "HOTSTART_SERVED"

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_RESTORED_SIGNALS = (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                     signal.SIGUSR2, signal.SIGALRM)


def become_client_process(request: dict, fds: list[int], close_fds: list[int], server_pid: int) -> None:
    """Run `request` in this (child) process and exit with the script's status; never returns."""
    status = 1
    try:
        _restore_signals()  # first: the server's wake-up descriptor is about to close
        _end_with_server(server_pid)
        for fd in close_fds:  # the server's listening socket, wake-up pipe and other clients' sockets
            try:
                os.close(fd)
            except OSError:
                pass
        os.setsid()
        fresh_random.reseed()
        _take_std_streams(fds)
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[SERVED_ENV] = str(os.getpid())
        os.chdir(request["cwd"])
        if request["kind"] == "module":
            status = runner.run_module(request["target"], list(request["args"]))
        else:
            status = runner.run_script(request["target"], list(request["args"]))
    except BaseException as e:  # noqa: BLE001 - set-up failed (no such folder, ...): say so on the client's stderr
        try:
            print(f"hotstart serve: could not start the run: {type(e).__name__}: {e}", file=sys.stderr)
        except Exception:  # noqa: BLE001
            pass
        status = 1
    runner.end_process(status)


def _end_with_server(server_pid: int) -> None:
    """Ask the kernel for SIGTERM when the server dies (PR_SET_PDEATHSIG), so that a run does not go
    on as an orphan nobody waits for; the client, which loses the server too, stops the rest of the
    run's process group and says so (`run_process`). If the server died before this, stop now."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    if os.getppid() != server_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def _restore_signals() -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # what Python sets at start
    for sig in _RESTORED_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _take_std_streams(fds: list[int]) -> None:
    """Make the client's descriptors this process's 0, 1, 2, and rebuild sys.std* over them as
    Python's start-up would (line-buffered stdout on a terminal, always line-buffered stderr)."""
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)  # dup2's copy is inheritable, as the real 0, 1, 2 are
    for fd in fds:
        if fd > 2:
            os.close(fd)
    old = (sys.stdin, sys.stdout, sys.stderr)
    unbuffered = bool(getattr(old[1], "write_through", False))  # python -u / PYTHONUNBUFFERED (same as ours)

    def stream(fd, mode, like, line_buffering, write_through=False):
        encoding = getattr(like, "encoding", None) or "utf-8"
        errors = getattr(like, "errors", None) or "strict"
        raw = io.open(fd, mode + "b", buffering=0 if unbuffered and mode == "w" else -1, closefd=False)
        return io.TextIOWrapper(raw, encoding=encoding, errors=errors, line_buffering=line_buffering,
                                write_through=write_through)

    sys.stdin = sys.__stdin__ = stream(0, "r", old[0], False)
    sys.stdout = sys.__stdout__ = stream(1, "w", old[1], os.isatty(1), unbuffered)
    sys.stderr = sys.__stderr__ = stream(2, "w", old[2], True, unbuffered)
