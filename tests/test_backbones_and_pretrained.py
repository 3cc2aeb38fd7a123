"""Backbone names and pretrained weights: a misspelled name is refused up front with the names
meant; pretrained weights come from the local cache, or fail fast and clearly offline.

No test here reaches the network: offline is simulated (HF_HUB_OFFLINE, empty cache folders, a
socket module that refuses to connect).
"""
import socket
import time

import numpy as np
import pytest
import torch

from hotstart import ImageClassificationSingle, datasets, tasklearner


@pytest.fixture(scope="module")
def digits_task():
    data, blocks = datasets.load("digits")
    return data, ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a test tried to reach the network: {args}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


# --- a misspelled backbone --------------------------------------------------------------------

class _ExplodingColumn:
    """A dataset column whose every access fails: the backbone check must come first."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        raise AssertionError("the data was read before the backbone name was checked")


@pytest.mark.parametrize("typo, meant", [("resnt18", "resnet18"), ("resnet81", "resnet18"),
                                         ("ResNet18", "resnet18"), ("resnet18.a1_in1", "resnet18.a1_in1k"),
                                         ("smallcnn", "did you mean SmallCNN"),  # hotstart's own names too
                                         ("smallcnn_mirco", "did you mean smallcnn_micro")])
def test_misspelled_backbone_is_refused_before_the_data_with_close_matches(digits_task, typo, meant):
    _, task = digits_task
    data = (_ExplodingColumn(), _ExplodingColumn())
    with pytest.raises(ValueError) as info:
        tasklearner(task, data, backbone=typo, progress=False)
    message = str(info.value)
    assert repr(typo) in message and meant in message


def test_pretrained_needs_a_timm_name(digits_task):
    data, task = digits_task
    with pytest.raises(ValueError, match="pretrained"):
        tasklearner(task, data, pretrained=True, progress=False)


# --- pretrained weights without a network -----------------------------------------------------

@pytest.fixture
def empty_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    return tmp_path / "hf"


def test_pretrained_offline_fails_fast_with_what_to_do(digits_task, empty_caches, monkeypatch, no_network):
    from hotstart.models.pretrained import PretrainedWeightsUnavailable

    data, task = digits_task
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(PretrainedWeightsUnavailable) as info:
        tasklearner(task, data, backbone="resnet10t", pretrained=True, progress=False)
    assert time.perf_counter() - start < 5
    message = str(info.value)
    assert "resnet10t" in message and "network" in message and str(empty_caches) in message
    assert "pretrained=False" in message and "HF_HUB_OFFLINE" in message


def test_pretrained_unreachable_host_fails_fast(empty_caches, monkeypatch):
    """No HF_HUB_OFFLINE, but no connection can be made: one quick probe, then the same clear error."""
    from hotstart.models.pretrained import PretrainedWeightsUnavailable, locate_pretrained

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for proxy in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    attempts = []

    def unreachable(address, timeout=None, *args, **kwargs):
        attempts.append((address, timeout))
        raise OSError("Network is unreachable (simulated)")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    start = time.perf_counter()
    with pytest.raises(PretrainedWeightsUnavailable, match="unreachable"):
        locate_pretrained("resnet10t")
    assert time.perf_counter() - start < 5
    assert attempts == [(("huggingface.co", 443), 3.0)]


def test_pretrained_weights_from_the_local_cache_need_no_network(digits_task, empty_caches, monkeypatch,
                                                                no_network):
    """Weights in the Hugging Face cache layout are used as they are, offline."""
    import timm
    from safetensors.torch import save_file

    data, task = digits_task
    task = ImageClassificationSingle(task.blocks, size=(32, 32), augment={"flip": 0.0})  # resnet10t downsamples 32x
    with torch.random.fork_rng():
        torch.manual_seed(0)
        reference = timm.create_model("resnet10t")  # stands in for the published checkpoint
    state = {k: v.contiguous() for k, v in reference.state_dict().items()}
    repo = empty_caches / "models--timm--resnet10t.c3_in1k"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    (repo / "snapshots" / "0123abcd").mkdir(parents=True)
    save_file(state, str(repo / "snapshots" / "0123abcd" / "model.safetensors"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    learner = tasklearner(task, data, backbone="resnet10t", pretrained=True, progress=False)
    net = learner.model.backbone
    torch.testing.assert_close(net.layer1[0].conv1.weight, state["layer1.0.conv1.weight"], rtol=0, atol=0)
    # digits are grayscale: timm folds the RGB filters of the first conv into one channel
    torch.testing.assert_close(net.conv1[0].weight, state["conv1.0.weight"].sum(1, keepdim=True))
    mean, std = learner.task.stats  # the pretrained stats, averaged for one channel
    assert np.allclose(mean, [np.mean([0.485, 0.456, 0.406])]) and len(std) == 1
