"""The server's own error: the server cannot start or be reached in a way the user must fix."""
from __future__ import annotations

from ..errors import HotstartError


class ServeError(HotstartError, RuntimeError):
    """``hotstart serve`` cannot start, stop or be used; the message says what to do."""
