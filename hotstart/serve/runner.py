"""Run a script or a module exactly as ``python script.py`` / ``python -m module`` would.

Used twice: in a forked child of the server, and by the client itself when it falls back to a
plain run. What ``python script.py args`` sets up, this sets up:

- ``sys.argv`` is ``[script as typed, *args]``; ``sys.path[0]`` is the script's folder, symlinks
  resolved; ``__main__`` is a fresh module whose ``__file__`` is the path made absolute as python makes it,
  ``__spec__`` is None and ``__loader__`` a SourceFileLoader, so ``if __name__ == "__main__":``,
  pickling of ``__main__`` classes and Lightning Fabric's re-launch of the script all work;
- an uncaught exception prints its traceback through ``sys.excepthook``, starting at the script's
  own frame (ours are cut off), and gives status 1; ``sys.exit(x)`` gives Python's status for x;
- an uncaught KeyboardInterrupt gives ``-SIGINT``: the caller ends the process by SIGINT, as
  Python itself does since 3.8, so a shell sees 130.

Folders and zip files with a ``__main__.py`` go through `runpy.run_path`, modules through
`runpy.run_module` (``alter_sys=True``: ``sys.argv[0]`` becomes the module's file, as with ``-m``).
"""
from __future__ import annotations

import importlib.machinery
import os
import runpy
import signal
import sys
import types

_OUR_FILES = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}


def run_script(path: str, args: list[str]) -> int:
    """Run the file at `path` as ``__main__``; the status ``python path *args`` would exit with."""
    if not os.path.exists(path):  # python's own words and status for a missing script
        print(f"{sys.executable}: can't open file {os.path.join(os.getcwd(), path)!r}: "
              f"[Errno 2] No such file or directory", file=sys.stderr)
        return 2
    sys.argv = [path, *args]
    real = os.path.realpath(path)
    sys.path[0] = os.path.dirname(real)
    if os.path.isdir(path) or not path.endswith(".py") and _is_zip(path):
        return _guarded(lambda: runpy.run_path(path, run_name="__main__"))
    # python makes the path absolute by joining it to the cwd, without normalising it
    return _guarded(lambda: _exec_as_main(path if os.path.isabs(path) else os.path.join(os.getcwd(), path)))


def run_module(name: str, args: list[str]) -> int:
    """Run module `name` as ``python -m name *args`` would."""
    sys.argv = [name, *args]  # run_module replaces argv[0] with the module's file
    sys.path[0] = os.getcwd()
    return _guarded(lambda: runpy.run_module(name, run_name="__main__", alter_sys=True))


def _exec_as_main(abspath: str) -> None:
    with open(abspath, "rb") as f:
        source = f.read()
    code = compile(source, abspath, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__file__ = abspath
    main.__cached__ = None
    main.__spec__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", abspath)
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _is_zip(path: str) -> bool:
    import zipfile

    return zipfile.is_zipfile(path)


def _guarded(run) -> int:
    try:
        run()
    except SystemExit as e:
        return exit_status(e.code)
    except KeyboardInterrupt as e:
        _print_exception(e)
        return -signal.SIGINT
    except BaseException as e:  # noqa: BLE001 - the script's exception, reported as python reports it
        _print_exception(e)
        return 1
    return 0


def exit_status(code) -> int:
    """The process status Python gives ``sys.exit(code)`` (printing a non-integer code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        print(code, file=sys.stderr)
    except Exception:  # noqa: BLE001 - stderr is gone; the status still holds
        pass
    return 1


def _print_exception(e: BaseException) -> None:
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in _OUR_FILES:
        tb = tb.tb_next
    sys.excepthook(type(e), e.with_traceback(tb), tb)  # the default hook prints e.__traceback__


def end_process(status: int) -> None:
    """Leave the process as Python's own shutdown would, then exit with `status` (never returns).

    For a fork of the server, which must not unwind into the server's code: wait for the script's
    non-daemon threads (``threading._shutdown``, what Py_FinalizeEx calls first), run ``atexit``
    handlers, flush the standard streams, then ``os._exit``. A negative status is a signal: the
    process ends by it (default action), as Python does for an uncaught KeyboardInterrupt."""
    import atexit
    import threading

    try:
        threading._shutdown()  # stdlib's own hook for "the main thread is done"; no public equivalent
    except BaseException:  # noqa: BLE001 - a Ctrl-C while joining: go on exiting, as python does
        pass
    atexit._run_exitfuncs()
    flush_std_streams()
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-status])
        os.kill(os.getpid(), -status)
        status = 128 - status
    os._exit(status & 0xFF)


def flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more can be said on it
            pass
