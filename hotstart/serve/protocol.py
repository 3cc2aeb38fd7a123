"""What client and server say to each other over the Unix socket, and how.

A message is a JSON object in a frame: a 4-byte big-endian length, then the UTF-8 text. File
descriptors (the client's stdin, stdout and stderr) travel with the request frame as SCM_RIGHTS
ancillary data, so the child writes straight to the client's terminal or pipe: no copying
through the server, and ``isatty()`` / terminal size / pipes behave as for a local process.

The exchange, one connection per run:

    client -> server  {"request": ..., "identity": ..., "env": ..., "argv": ..., "cwd": ...} + 3 fds
    server -> client  {"refused": reason}                       (the client runs the script itself)
                   or {"started": child_pid}, later {"exit": code}   (code < 0: killed by signal -code)
    client -> server  {"signal": signum}                        (any time during the run)

    client -> server  {"status": true} -> {"status": {...}};  {"stop": true} -> {"stopping": pid}

A client that disappears (its end of the socket closes) ends its run: the server kills the child's
process group. `peer_credentials` reads SO_PEERCRED, the kernel's word on who is at the other end.
"""
from __future__ import annotations

import array
import json
import socket
import struct

from .errors import ServeError

PROTOCOL_VERSION = 1
_HEADER = struct.Struct("!I")
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # an environment is a few kB; anything near this is not ours
_FD_SIZE = array.array("i").itemsize


class ProtocolError(ServeError):
    """The other end sent something that is not a message of this protocol."""


def encode(obj) -> bytes:
    data = json.dumps(obj).encode("utf-8")
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    return _HEADER.pack(len(data)) + data


def send(sock: socket.socket, obj, fds=()) -> None:
    """Send one message; `fds` (open file descriptors) go with its first byte."""
    frame = encode(obj)
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


class Channel:
    """One end of a connection, with its read buffer: complete messages come out one at a time.

    `receive` blocks until a message (or end of stream) arrives; `pump` reads what is there once and
    returns every complete message, for the server's poll loop. Received descriptors collect in
    `fds`, close-on-exec, in arrival order."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []
        self.closed = False  # the peer closed its end

    def fileno(self) -> int:
        return self.sock.fileno()

    def _read_once(self, max_fds: int) -> bool:
        """One recv; False at end of stream."""
        if max_fds:
            data, ancdata, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(max_fds * _FD_SIZE),
                                                    socket.MSG_CMSG_CLOEXEC)
            for level, kind, cdata in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(cdata[: len(cdata) - len(cdata) % _FD_SIZE])
                    self.fds.extend(fds)
        else:
            data = self.sock.recv(65536)
        if not data:
            self.closed = True
            return False
        self.buffer += data
        return True

    def _next(self):
        if len(self.buffer) < _HEADER.size:
            return None
        (n,) = _HEADER.unpack_from(self.buffer)
        if n > MAX_MESSAGE_BYTES:
            raise ProtocolError(f"frame of {n} bytes announced: not a hotstart serve peer")
        if len(self.buffer) < _HEADER.size + n:
            return None
        data, self.buffer = self.buffer[_HEADER.size:_HEADER.size + n], self.buffer[_HEADER.size + n:]
        try:
            obj = json.loads(data.decode("utf-8"))
        except ValueError as e:
            raise ProtocolError(f"unreadable message: {e}") from None
        if not isinstance(obj, dict):
            raise ProtocolError(f"a message must be a JSON object, got {type(obj).__name__}")
        return obj

    def receive(self, max_fds: int = 0):
        """The next message, or None if the peer closed the connection first."""
        while True:
            msg = self._next()
            if msg is not None:
                return msg
            if self.closed or not self._read_once(max_fds):
                if self.buffer:
                    raise ProtocolError("connection closed in the middle of a message")
                return None

    def pump(self) -> list:
        """Read once (the socket is readable) and return the complete messages now buffered."""
        self._read_once(0)
        out = []
        while (msg := self._next()) is not None:
            out.append(msg)
        return out

    def send(self, obj, fds=()) -> None:
        send(self.sock, obj, fds)

    def close(self) -> None:
        self.sock.close()


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end, from the kernel (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)
