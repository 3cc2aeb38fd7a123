"""Memory of a process as the kernel accounts it, from ``/proc/PID/smaps_rollup``.

RSS counts every page a process maps; after a fork, the server and its children map the same
pages, so their RSS adds up to far more than the machine spends. PSS divides each shared page
among the processes that share it, and Private is what belongs to one process alone: a child's
Private is what a served run costs on top of the server.
"""
from __future__ import annotations


def smaps_rollup(pid: int | str = "self") -> dict[str, float]:
    """{"rss_mib", "pss_mib", "private_mib", "shared_mib"} of process `pid`."""
    kib = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                kib[parts[0].rstrip(":")] = int(parts[1])
    mib = lambda k: kib.get(k, 0) / 1024  # noqa: E731
    return {"rss_mib": mib("Rss"), "pss_mib": mib("Pss"),
            "private_mib": mib("Private_Clean") + mib("Private_Dirty"),
            "shared_mib": mib("Shared_Clean") + mib("Shared_Dirty")}
