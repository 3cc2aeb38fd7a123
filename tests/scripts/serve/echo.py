"""Report what `python echo.py ...` sees, as one JSON line (tests/test_serve.py compares served and direct)."""
import json
import os
import sys

what = sys.argv[1] if len(sys.argv) > 1 else "echo"
if what == "raise":
    raise ValueError("boom")
if what == "exit":
    sys.exit(int(sys.argv[2]))
if what == "exit-text":
    sys.exit("a message, not a number")
if what == "segv":
    os.kill(os.getpid(), 11)
if what == "_exit":
    os._exit(3)
if what == "sleep":  # write our pid, then wait to be signalled
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
    print("ready", flush=True)
    import time

    time.sleep(60)
stdin = sys.stdin.read() if what == "stdin" else None
print(json.dumps({"name": __name__, "argv": sys.argv, "path0": sys.path[0], "cwd": os.getcwd(), "file": __file__,
                  "spec": repr(__spec__), "env": os.environ.get("SERVE_TEST_VAR"), "stdin": stdin,
                  "umask": os.umask(0o022), "served": "HOTSTART_SERVED" in os.environ}))
