"""The manifest: what the warmup has warmed, as JSON in the cache folder, written atomically.

Entries are keyed by what decides whether a compiled backbone's cache entries can be reused:
torch version, device type, backbone, input channels and size, precision. Not the batch size
(the batch dimension is compiled dynamic) and not the number of classes (the head is not compiled).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from .cache import cache_dir

FORMAT = "hotstart.warmup/1"


def config_key(backbone, in_chans: int, size, device_type: str, precision: str | None) -> str | None:
    """The cache-relevant configuration as a string; None when it cannot be named (a custom module)."""
    import torch

    if backbone is None:
        name = "SmallCNN"
    elif isinstance(backbone, str):
        name = backbone
    else:
        return None
    precision = str(precision or "32-true")
    h, w = (int(s) for s in size)
    return f"torch={torch.__version__}|{device_type}|{name}|in{int(in_chans)}|{h}x{w}|{precision}"


def manifest_path(root=None) -> Path:
    return cache_dir(root) / "manifest.json"


def read_manifest(root=None) -> dict:
    path = manifest_path(root)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {"format": FORMAT, "entries": {}}
    except (json.JSONDecodeError, OSError):
        return {"format": FORMAT, "entries": {}}  # a damaged manifest means "nothing known warm"
    if data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return {"format": FORMAT, "entries": {}}
    return data


def record(key: str, *, workload: str, seconds: float, device: str, root=None) -> None:
    import torch

    from ..atomic import atomic_write_bytes

    data = read_manifest(root)
    data["entries"][key] = {"workload": workload, "seconds": round(float(seconds), 3), "device": device,
                            "torch": torch.__version__, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    atomic_write_bytes(manifest_path(root), json.dumps(data, indent=2, sort_keys=True).encode())


def is_warm(key: str | None, root=None) -> bool:
    return key is not None and key in read_manifest(root)["entries"]
