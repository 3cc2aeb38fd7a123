"""The warm parent: import the training path once, then fork one child per run.

    python -m hotstart serve --foreground      # what `hotstart serve` starts in the background

One thread, one ``poll`` loop, no timers: the listening socket, every running client's
connection, and a self-pipe that signals write to (``signal.set_wakeup_fd``: SIGCHLD to reap a
finished run, SIGTERM / SIGINT / SIGHUP to stop). A request is read with a short timeout and
answered at once; a run is a ``fork`` whose child becomes the client's process (`child`) and
never returns here. The parent tells the client the child's pid, forwards the client's signals
to the child's process group, kills that group if the client goes away (SIGKILL: as if the
process itself had been killed), and sends the exit status when it reaps the child.

The server refuses a run, and the client runs the script itself, when the peer is another user
(SO_PEERCRED), when `checks` finds another interpreter, library or start-up environment, or when
a preloaded module changed on disk (then the server also stops: its code is stale). It exits
after `idle_timeout` seconds without a run or a request, and on ``--stop`` once its runs end.
While it waits for them it moves its socket aside (`paths.stopping_socket_path`): it takes no
new run, a new server may start meanwhile, and ``--status`` / ``--stop`` still find it.
"""
from __future__ import annotations

import errno
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import checks, child, forksafety, memory
from .errors import ServeError
from .paths import ensure_private_dir, stopping_socket_path, stopping_socket_paths
from .preload import Stamps, preload
from .protocol import Channel, ProtocolError, peer_credentials

REQUEST_TIMEOUT_S = 5.0  # a client has this long to send its request; the loop waits meanwhile
FORWARDED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                               signal.SIGUSR2, signal.SIGWINCH, signal.SIGCONT, signal.SIGALRM})
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass
class Run:
    """A child in progress, and the connection of the client waiting for it (None once gone)."""
    pid: int
    channel: Channel | None
    argv: list
    cwd: str
    started: float = field(default_factory=time.monotonic)


class Server:
    def __init__(self, path: Path, *, idle_timeout: float, preload_names, log=None):
        self.path = Path(path)
        self.idle_timeout = idle_timeout
        self.preload_names = tuple(preload_names)
        self.log = log or (lambda msg: print(f"hotstart serve: {msg}", file=sys.stderr, flush=True))
        self.runs: dict[int, Run] = {}
        self.stopping = False
        self.started = time.monotonic()
        self.last_activity = self.started
        self.served = 0

    # --- start-up -------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Claim the socket path, preload, make sure a fork is safe, then listen."""
        ensure_private_dir(self.path.parent)
        self._claim_path()
        self.env = dict(os.environ)  # what the server started with: what a client must match
        took = preload(self.preload_names)
        # variables the preloaded libraries set for themselves at import (lightning_fabric sets
        # PYTORCH_NVML_BASED_CUDA_CHECK): a child gets them on top of the client's environment,
        # since those libraries are imported in it
        self.env_added = {k: v for k, v in os.environ.items() if self.env.get(k) != v}
        self.preload_s = sum(took.values())
        forksafety.settle()
        forksafety.check()
        self.identity = checks.identity()
        self.stamps = Stamps()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket file is born 0600: no window where others may connect
        try:
            self.listener.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self.inode = os.stat(self.path).st_ino
        self.listener.listen(128)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        for sig in (signal.SIGCHLD, *_STOP_SIGNALS):
            signal.signal(sig, _note_signal)
        self.poller = select.poll()
        self.poller.register(self.listener, select.POLLIN)
        self.poller.register(self.wake_r, select.POLLIN)
        self.last_activity = time.monotonic()
        self.log(f"pid {os.getpid()} serving on {self.path} (preloaded {len(self.stamps.files)} modules in "
                 f"{self.preload_s:.1f} s; idle exit after {self.idle_timeout:.0f} s)")

    def _claim_path(self) -> None:
        """Refuse if a live server holds the path; remove a stale socket file left by a dead one
        (and those that dead servers left while stopping)."""
        for stale in stopping_socket_paths(self.path.parent):
            try:
                if _nobody_listens(stale):
                    stale.unlink(missing_ok=True)
            except OSError:  # not ours to judge or remove: leave it
                pass
        if not os.path.lexists(self.path):
            return
        if not self.path.is_socket():
            raise ServeError(f"{self.path} exists and is not a socket: remove it or set HOTSTART_RUNTIME_DIR")
        if _nobody_listens(self.path):
            self.log(f"removing a stale socket file {self.path} (no server listens on it)")
            os.unlink(self.path)
            return
        raise ServeError(f"a server already listens on {self.path} (hotstart serve --status; --stop)")

    # --- the loop -------------------------------------------------------------------------------
    def serve_forever(self) -> None:
        try:
            while True:
                if not self.runs and (self.stopping or self._idle_left() <= 0):
                    if not self.stopping:
                        self.log(f"idle for {self.idle_timeout:.0f} s: exiting")
                    return
                timeout = None if self.runs else self._idle_left() * 1000
                for fd, events in self.poller.poll(timeout):
                    if fd == self.wake_r:
                        self._on_signals()
                    elif self.listener is not None and fd == self.listener.fileno():
                        self._accept()
                    else:
                        self._on_client(fd)
        finally:  # only the server itself gets here: a child leaves through os._exit
            self._close_listener()

    def _idle_left(self) -> float:
        return self.idle_timeout - (time.monotonic() - self.last_activity)

    def stop(self) -> None:
        if not self.stopping:
            self.stopping = True
            self.log(f"stopping{f' once {len(self.runs)} run(s) end' if self.runs else ''}")
            if not (self.runs and self._move_socket_aside()):
                self._close_listener()

    def _move_socket_aside(self) -> bool:
        """Rename our socket to the stopping name: no new run finds it, --status and --stop do."""
        aside = stopping_socket_path(self.path.parent, os.getpid())
        try:
            if aside is None or os.stat(self.path).st_ino != self.inode:
                return False
            os.rename(self.path, aside)
        except OSError:
            return False
        self.log(f"moved the socket to {aside} until the runs end")
        self.path = aside
        return True

    def _close_listener(self) -> None:
        if getattr(self, "listener", None) is None:
            return
        self.poller.unregister(self.listener)
        self.listener.close()
        self.listener = None
        try:  # only our own socket file: a newer server may have replaced it
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _on_signals(self) -> None:
        try:
            data = os.read(self.wake_r, 512)
        except BlockingIOError:
            return
        for signum in set(data):
            if signum == signal.SIGCHLD:
                self._reap()
            elif signum in _STOP_SIGNALS:
                self.stop()

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.runs.pop(pid, None)
            if run is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            self.log(f"run {pid} ended with status {code} after {time.monotonic() - run.started:.1f} s")
            self.last_activity = time.monotonic()
            if run.channel is not None:
                self.poller.unregister(run.channel.fileno())
                try:
                    run.channel.send({"exit": code})
                except OSError:
                    pass
                run.channel.close()

    def _on_client(self, fd: int) -> None:
        run = next((r for r in self.runs.values() if r.channel is not None and r.channel.fileno() == fd), None)
        if run is None:
            self.poller.unregister(fd)
            return
        try:
            messages = run.channel.pump()
        except (OSError, ProtocolError):
            messages, run.channel.closed = [], True
        for msg in messages:
            sig = msg.get("signal")
            if isinstance(sig, int) and sig in FORWARDED_SIGNALS:
                _signal_run(run.pid, sig)
        if run.channel.closed:  # the client is gone: end its run, as if its process had been killed
            self.log(f"client of run {run.pid} went away: killing the run")
            self.poller.unregister(fd)
            run.channel.close()
            run.channel = None
            _signal_run(run.pid, signal.SIGKILL)

    # --- one connection -------------------------------------------------------------------------
    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_activity = time.monotonic()
        channel = Channel(conn)
        keep = False
        try:
            keep = self._handle(channel)
        except (OSError, ProtocolError, ValueError, KeyError, TypeError) as e:
            self.log(f"dropped a bad request: {type(e).__name__}: {e}")
        finally:
            for fd in channel.fds:
                os.close(fd)
            channel.fds = []
            if not keep:
                channel.close()

    def _handle(self, channel: Channel) -> bool:
        """Answer one request; True if the connection now belongs to a run."""
        pid, uid, _ = peer_credentials(channel.sock)
        if uid != os.getuid():
            self.log(f"refused a connection from uid {uid} (pid {pid}): only uid {os.getuid()} may use this server")
            channel.send({"refused": f"this server belongs to uid {os.getuid()}, not to uid {uid}"})
            return False
        channel.sock.settimeout(REQUEST_TIMEOUT_S)
        msg = channel.receive(max_fds=3)
        if msg is None:
            return False
        if msg.get("status"):
            channel.send({"status": self.status()})
            return False
        if msg.get("stop"):
            channel.send({"stopping": os.getpid(), "runs": len(self.runs)})
            self.stop()
            return False
        request = msg["run"]
        reason = self._refusal(msg, len(channel.fds))
        if reason:
            channel.send({"refused": reason})
            return False
        return self._fork_run(channel, request)

    def _refusal(self, msg: dict, n_fds: int) -> str | None:
        if self.stopping:
            return "the server is stopping"
        reason = (checks.identity_mismatch(self.identity, msg.get("identity") or {})
                  or checks.env_mismatch(self.env, msg["run"]["env"], self.env_added))
        if reason:
            return reason
        if n_fds != 3:
            return f"expected stdin, stdout and stderr as descriptors, got {n_fds}"
        changed = self.stamps.changed()
        if changed:
            self.log(f"{changed} changed on disk since the preload: stopping")
            self.stop()
            return f"{changed} changed on disk since the server started (it stops now: start it again)"
        unsafe = forksafety.problems()
        if unsafe:
            self.log("not safe to fork: " + "; ".join(unsafe) + ": stopping")
            self.stop()
            return "the server is not safe to fork: " + "; ".join(unsafe)
        return None

    def _fork_run(self, channel: Channel, request: dict) -> bool:
        sys.stdout.flush()
        sys.stderr.flush()
        others = [r.channel.fileno() for r in self.runs.values() if r.channel is not None]
        server_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: becomes the client's process and exits; never returns from here
            try:
                request["env"] = {**request["env"], **self.env_added}
                close = [self.listener.fileno(), self.wake_r, self.wake_w, channel.fileno(), *others]
                child.become_client_process(request, channel.fds, close, server_pid)
            finally:
                os._exit(1)
        channel.sock.settimeout(None)
        self.served += 1
        self.runs[pid] = Run(pid, channel, [request["target"], *request["args"]], request["cwd"])
        self.log(f"run {pid}: {' '.join(self.runs[pid].argv)} (in {request['cwd']})")
        try:
            channel.send({"started": pid})
        except OSError:
            pass
        self.poller.register(channel.fileno(), select.POLLIN)
        return True

    def status(self) -> dict:
        now = time.monotonic()
        runs = []
        for r in self.runs.values():
            try:
                mem = memory.smaps_rollup(r.pid)
            except OSError:
                mem = None
            runs.append({"pid": r.pid, "argv": r.argv, "cwd": r.cwd, "running_s": now - r.started, "memory": mem})
        return {"pid": os.getpid(), "socket": str(self.path), "uptime_s": now - self.started,
                "idle_timeout_s": self.idle_timeout, "idle_left_s": None if self.runs else self._idle_left(),
                "preload_s": self.preload_s, "preloaded": list(self.preload_names),
                "modules": len(self.stamps.files), "served": self.served, "stopping": self.stopping,
                "memory": memory.smaps_rollup(), "runs": runs, "identity": self.identity}


def _nobody_listens(path: Path) -> bool:
    """Whether `path` is a socket file that no process listens on (its server died)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except ConnectionRefusedError:
        return True
    finally:
        probe.close()
    return False


def _note_signal(signum, frame) -> None:
    """Installed so that the C-level handler writes `signum` to the wake-up pipe; the loop acts."""


def _signal_run(pid: int, sig: int) -> None:
    """Signal the run's process group (the child is its leader after setsid), else the child alone
    (it may not have reached setsid yet)."""
    try:
        os.killpg(pid, sig)
        return
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except OSError as e:
        if e.errno != errno.ESRCH:
            raise
