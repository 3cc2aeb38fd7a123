"""Check a timm backbone name up front, and suggest the names the user probably meant.

A misspelled name (``resnt18``, ``resnet81``) should fail before any data is read or any model is
built, with the close matches that ``difflib`` finds among ``timm.list_models()`` (a substring
pattern finds nothing for a transposition or a missing letter). A pretrained tag
(``resnet18.a1_in1k``) is checked against timm's pretrained tags of that architecture.
"""
from __future__ import annotations

from ..gc_pause import import_paused


def check_backbone_name(name: str, own: tuple[str, ...] = ()) -> None:
    """Raise `UsageError` (a ValueError) naming `name` and its close matches when timm has no such
    model. `own`: hotstart's own model names (``SmallCNN``, ``smallcnn_micro``...), suggested too,
    so that ``smallcnn`` gets "did you mean SmallCNN"."""
    timm = import_paused("timm")  # hotstart/gc_pause.py: ~0.45 s less with torchvision

    from ..errors import UsageError

    if ":" in name:  # "hf-hub:org/repo" would fetch its config from the network, and cannot be rebuilt offline
        raise UsageError(f"backbone {name!r}: only timm's registered model names are supported (e.g. 'resnet18', "
                         f"'resnet18.a1_in1k'), not {name.split(':', 1)[0]}: sources; pass backbone=<nn.Module> "
                         f"for any other model")
    arch, _, tag = name.partition(".")
    if not timm.is_model(arch):
        ours = f"one of hotstart's models ({', '.join(own)}) nor " if own else ""
        raise UsageError(f"backbone {name!r} is {'neither ' if own else 'not '}{ours}a timm model name"
                         f"{_did_you_mean(arch, [*own, *timm.list_models()])} (timm.list_models() lists timm's)")
    if tag:
        tagged = timm.list_pretrained(f"{arch}.*")
        if name not in tagged:
            raise UsageError(f"backbone {name!r}: timm has no pretrained tag {tag!r} for {arch!r}"
                             f"{_did_you_mean(name, tagged)}; its tags: {tagged or 'none'}")


def _did_you_mean(name: str, candidates) -> str:
    import difflib

    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=5, cutoff=0.6)
    return f"; did you mean {', '.join(lowered[c] for c in close)}?" if close else ""
