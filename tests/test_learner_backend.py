"""The backend protocol (hotstart/learner/backend.py): both backends implement every member of
`Backend`, with its signature, and nothing a caller could probe for besides; in one process the
collectives are the identity; no module of hotstart probes a backend (``hasattr`` / ``getattr``)
or keeps values on objects of other libraries (``compile_context``, ``shard_sampler``,
``hotstart_layer``). Across processes the collectives run in tests/test_learner_ddp.py."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import hotstart
from hotstart.learner.backend import Backend, FabricBackend, PlainBackend


@pytest.fixture(scope="module")
def backends():
    return [PlainBackend("cpu"), FabricBackend(accelerator="cpu")]


def _members(cls) -> dict:
    """The public members a class declares or inherits (methods and properties), by name."""
    return {n: v for c in reversed(cls.__mro__[:-1]) for n, v in vars(c).items() if not n.startswith("_")}


def test_both_backends_implement_the_whole_protocol(backends):
    declared = {n for n in _members(Backend)} | set(Backend.__annotations__)
    assert {"sum_tensors", "broadcast_", "clip_gradients", "no_backward_sync", "all_reduce_sum", "barrier",
            "device", "precision", "world_size"} <= declared
    for backend in backends:
        cls = type(backend)
        assert isinstance(backend, Backend) and not inspect.isabstract(cls)
        for name in declared:
            assert hasattr(backend, name), f"{cls.__name__} lacks {name}"
        for name, member in _members(Backend).items():
            here = vars(cls).get(name)
            assert here is not None, f"{cls.__name__} does not implement {name} itself"
            if callable(member):
                assert inspect.signature(here) == inspect.signature(member), f"{cls.__name__}.{name}'s signature"
        own = {n for n in [*_members(cls), *vars(backend)] if not n.startswith("_")} - declared
        assert own == ({"fabric"} if cls is FabricBackend else set()), f"{cls.__name__}: members outside Backend"


def test_in_one_process_the_collectives_are_the_identity(backends):
    for backend in backends:
        counts, sums = torch.tensor([3, 4]), torch.tensor([[0.5, 1.5]])
        got = backend.sum_tensors([counts, sums])
        assert got[0] is counts and got[1] is sums
        buf = torch.tensor([1.0, 2.0])
        backend.broadcast_([buf])
        assert torch.equal(buf, torch.tensor([1.0, 2.0]))
        assert backend.all_reduce_sum(1, 2.5) == (1.0, 2.5) and backend.all_reduce_max(7.0) == 7.0
        assert backend.grad_scaler is None and backend.precision == "32-true"
        backend.barrier()


def test_both_backends_clip_gradients_as_torch_does(backends):
    def grads(backend=None):
        with torch.random.fork_rng():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        if backend is not None:
            model, opt = backend.setup_module(model), backend.setup_optimizer(opt)
        (model(torch.ones(2, 4)) * 100).sum().backward()
        with (backend.no_backward_sync(model, True) if backend is not None else torch.no_grad()):
            pass  # a context on every backend (a no-op in one process)
        norm = (backend.clip_gradients(model, opt, 1.0) if backend is not None
                else torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        return float(norm), [p.grad.clone() for p in model.parameters()]

    norm, want = grads()
    assert norm > 1.0  # the clip does something
    for backend in backends:
        got_norm, got = grads(backend)
        assert got_norm == pytest.approx(norm) and all(torch.equal(a, b) for a, b in zip(got, want))


INFORMAL = re.compile(r"(hasattr|getattr)\([^)]*backend|\.(compile_context|shard_sampler|hotstart_layer)\b")


def test_no_module_probes_a_backend_or_patches_another_librarys_object():
    root = Path(hotstart.__file__).parent
    hits = [f"{p.relative_to(root)}:{i}: {line.strip()}" for p in sorted(root.rglob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if INFORMAL.search(line)]
    assert hits == []
