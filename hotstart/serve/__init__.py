"""The warm process: ``hotstart serve`` keeps torch, torchvision, timm and hotstart imported, and
``hotstart run script.py`` / ``hotstart train ...`` hand their run to it, so that a run skips the
seconds of start-up that every ``python script.py`` pays.

    hotstart serve                    # start the server in the background (returns when it listens)
    hotstart run train.py --epochs 3  # runs train.py in a fresh fork of the server, as `python train.py` would
    hotstart train photos/            # the same for hotstart's own commands, when a server is running
    hotstart serve --status           # pid, uptime, memory, the runs in progress
    hotstart serve --stop

How it works (after Python's multiprocessing forkserver, DaemonMode.jl and emacsclient):

- the server imports the training path once (`preload`), checks that it holds no thread and no CUDA
  context (`forksafety`), and waits on a Unix socket in the user's runtime folder (`paths`);
- the client sends its argv, working folder and environment, and its stdin / stdout / stderr as file
  descriptors (`protocol`, SCM_RIGHTS); the server checks the peer's uid (SO_PEERCRED) and that
  both sides are the same interpreter, hotstart, torch and start-up environment (`checks`);
- the server forks one child per run; the child becomes the script's process (`runner`): ``__main__``,
  ``sys.argv``, ``sys.path[0]``, cwd, env, tracebacks and exit codes as with ``python script.py``;
- the client forwards its signals (Ctrl-C reaches the child as SIGINT) and exits with the child's
  status (`client`). When the server must not be used, the client says why in one line and runs
  the script in its own process instead. If the server dies during a run, the run is stopped
  and the client says so, with the run's pid (`run_process`).

Modules: `paths` (where the socket lives), `protocol` (framing, descriptors, peer credentials),
`checks` (may this client use this server?), `preload` (what the server imports, and whether it
changed on disk), `forksafety` (no threads, no CUDA at fork time), `fresh_random` (a run's random
generators are a new process's), `runner` (run a script or a module as ``python`` would),
`server` (the parent), `child` (a fork becomes the client's process), `client` (``hotstart run``,
the hand-off of ``hotstart train``), `run_process` (the client's handle on its run, for when the
server dies), `daemon` (start in the background, ``--stop``, ``--status``).

Nothing here knows the training loop; the server only knows module names to import, and runs
hotstart's command line as ``python -m hotstart`` would.
"""
