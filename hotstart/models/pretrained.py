"""Pretrained timm weights: from the local cache without the network, or fail fast when offline.

timm downloads pretrained weights from the Hugging Face Hub (or, for a few models, a URL through
``torch.hub``). Without a network, that download retries for about a minute and then raises a hub
error that says nothing about what to do. So, before timm is asked for the weights:

1. look in the local caches that timm's download would fill (the Hub cache: ``$HF_HUB_CACHE``,
   ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``; torch.hub's ``checkpoints`` folder). Cached
   weights are loaded here (safetensors, or ``torch.load(weights_only=True)``) and handed to timm
   as its ``state_dict`` source, so a cached model never touches the network;
2. otherwise, with ``HF_HUB_OFFLINE`` set, or when a TCP connection to the host (or the proxy)
   cannot be made within a few seconds, raise `PretrainedWeightsUnavailable`, which says that
   pretrained weights need network access or a local cache, and how to train without them.
"""
from __future__ import annotations

import os
import threading
import urllib.parse
from pathlib import Path

from ..errors import HotstartError
from ..gc_pause import import_paused

PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "ON", "YES", "TRUE"}


class PretrainedWeightsUnavailable(HotstartError, ConnectionError):
    """Pretrained weights are neither in the local cache nor downloadable (no network)."""


def pretrained_overlay(name: str, *, timeout: float = PROBE_TIMEOUT_S) -> dict:
    """``pretrained_cfg_overlay`` for ``timm.create_model(name, pretrained=True)``.

    ``{"state_dict": ...}`` when the weights are cached locally, ``{}`` when timm may download
    them (the host answers). Raises `PretrainedWeightsUnavailable` when neither is possible.
    """
    cached = locate_pretrained(name, timeout=timeout)
    return {} if cached is None else {"state_dict": _load_weights(cached), "source": ""}


def locate_pretrained(name: str, *, timeout: float = PROBE_TIMEOUT_S) -> Path | None:
    """The cached weights file of timm model `name`, or None when it can be downloaded now.

    Raises `PretrainedWeightsUnavailable` when the weights are not cached and the network is off
    (``HF_HUB_OFFLINE``) or the host does not answer within `timeout` seconds; `UsageError` when timm
    has no pretrained weights for `name`. Reads nothing but the caches' folders.
    """
    timm = import_paused("timm")  # hotstart/gc_pause.py: ~0.45 s less with torchvision

    from ..errors import UsageError

    cfg = timm.models.get_pretrained_cfg(name)
    if cfg is None or not (cfg.hf_hub_id or cfg.url or cfg.file or cfg.state_dict):
        raise UsageError(f"timm has no pretrained weights for {name!r}; train it from scratch (pretrained=False)")
    if cfg.file or cfg.state_dict:  # a local source already: timm needs no network
        return None
    cached = _cached_file(cfg)
    if cached is not None:
        return cached
    where, host = _remote(cfg)
    reason = "HF_HUB_OFFLINE is set" if _offline() else _unreachable(host, timeout)
    if reason is None:
        return None
    raise PretrainedWeightsUnavailable(
        f"pretrained weights for {name!r} ({where}) are not in the local cache ({_cache_dirs_text()}) and "
        f"cannot be downloaded: {reason}. Pretrained weights need network access once, or a local cache: "
        f"run `python -c \"import timm; timm.create_model({name!r}, pretrained=True)\"` on a machine with "
        f"network and copy its Hugging Face cache folder here (or point HF_HUB_CACHE / HF_HOME at a copy). "
        f"To train without them, leave out --pretrained (pretrained=False): the backbone starts from random "
        f"weights.")


# --- the local caches ------------------------------------------------------------------------

def _hf_cache_dir() -> str:
    """Where huggingface_hub keeps files, read from the environment now (its constants are read at import)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.path.expanduser(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return os.path.join(os.path.expanduser(os.environ["HF_HOME"]), "hub")
    from huggingface_hub import constants

    return constants.HF_HUB_CACHE


def _torch_checkpoints_dir() -> Path:
    import torch.hub

    return Path(torch.hub.get_dir()) / "checkpoints"


def _cache_dirs_text() -> str:
    return f"{_hf_cache_dir()}, {_torch_checkpoints_dir()}"


def _cached_file(cfg) -> Path | None:
    if cfg.hf_hub_id:
        from huggingface_hub import try_to_load_from_cache

        repo, _, revision = cfg.hf_hub_id.partition("@")
        names = [cfg.hf_hub_filename] if cfg.hf_hub_filename else ["model.safetensors", "pytorch_model.bin"]
        for filename in names:
            found = try_to_load_from_cache(repo, filename, cache_dir=_hf_cache_dir(), revision=revision or None)
            if isinstance(found, str) and os.path.isfile(found):
                return Path(found)
    if cfg.url:
        path = _torch_checkpoints_dir() / os.path.basename(urllib.parse.urlsplit(cfg.url).path)
        if path.is_file():
            return path
    return None


def _load_weights(path: Path) -> dict:
    """A cached checkpoint as a state dict, without unpickling arbitrary objects."""
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path), device="cpu")
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "model"):  # some checkpoints wrap the weights
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    return state


# --- the network -----------------------------------------------------------------------------

def _offline() -> bool:
    return any(os.environ.get(v, "").upper() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _remote(cfg) -> tuple[str, str]:
    """(what is downloaded, from which host) for timm's download of `cfg`'s weights."""
    if cfg.hf_hub_id:
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        return f"{cfg.hf_hub_id} on the Hugging Face Hub", endpoint
    return cfg.url, cfg.url


def _unreachable(url: str, timeout: float) -> str | None:
    """None when a TCP connection to `url`'s host (or the https proxy) opens within `timeout`, else why not."""
    import socket
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxy = None if urllib.request.proxy_bypass(parts.hostname or "") else urllib.request.getproxies().get(parts.scheme)
    target = urllib.parse.urlsplit(proxy) if proxy else parts
    host, port = target.hostname, target.port or (443 if target.scheme == "https" else 80)
    result: list = []

    def probe():  # in a thread: name resolution has no timeout of its own
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            result.append(None)
        except OSError as e:
            result.append(f"{host}:{port} is unreachable ({e})")

    thread = threading.Thread(target=probe, daemon=True, name="hotstart-network-probe")
    thread.start()
    thread.join(timeout)
    return result[0] if result else f"{host}:{port} did not answer within {timeout:g} s"
