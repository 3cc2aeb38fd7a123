"""Data parallel over 2 processes (gloo, CPU) through Lightning Fabric (issue 14), on digits.

One launch of tests/scripts/ddp_digits.py with ``--devices 2``: hotstart asks Fabric for 2
processes and Fabric re-launches the script for the second, as Lightning's Trainer does. The
checks: both ranks hold the same history; the validation accuracy is, as an exact count, what
one process computes with the final weights on the same set; only rank 0 wrote files and printed
the epoch table; the accuracy is within 1 point of a one-process run with the same global batch.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import prestart
from hotstart.learner.data import ShardSampler
from hotstart.learner.rng import derive_seed

SCRIPT = Path(__file__).parent / "scripts" / "ddp_digits.py"


def _mlp(channels):  # the script's model
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(channels * 64, 64), nn.ReLU(), nn.Linear(64, 10))


def test_shards_are_disjoint_seeded_and_reshuffled():
    n, world = 101, 2
    for shuffle in (False, True):
        shards = []
        for r in range(world):
            s = ShardSampler(n, r, world, shuffle)
            s.set_epoch_seed(derive_seed(0, 1))
            shards.append(list(s))
            assert len(shards[-1]) == len(s)
        if shuffle:  # padded by wrapping around: equal shards, one sample twice in all
            assert len(shards[0]) == len(shards[1]) == 51 and len(set(shards[0] + shards[1])) == n
        else:  # validation: disjoint and unpadded, every sample exactly once
            assert sorted(shards[0] + shards[1]) == list(range(n)) and not set(shards[0]) & set(shards[1])
    s = ShardSampler(n, 0, world, True)
    s.set_epoch_seed(derive_seed(0, 1))
    first = list(s)
    s.set_epoch_seed(derive_seed(0, 2))
    assert list(s) != first  # a new shuffle each epoch
    s.set_epoch_seed(derive_seed(0, 1))
    assert list(s) == first  # from the seed alone


@pytest.mark.parametrize("n, world", [(100, 2), (101, 2), (99, 3), (8, 4), (6, 4)])
def test_training_shards_have_the_length_they_say(n, world):
    """Every rank's shard holds exactly `len(sampler)` = ceil(n / world) indices; when `world`
    divides `n` nothing is padded (disjoint shards, each sample once), else the permutation wraps
    around by the remainder only. A total of ``(n // world + 1) * world`` would give 51 indices
    per rank for n = 100 while `len` says 50."""
    shards = []
    for r in range(world):
        s = ShardSampler(n, r, world, shuffle=True)
        s.set_epoch_seed(derive_seed(0, 3))
        shards.append(list(s))
        assert len(shards[-1]) == len(s) == -(-n // world)
    every = [i for shard in shards for i in shard]
    assert set(every) == set(range(n)) and len(every) == -(-n // world) * world
    if n % world == 0:
        assert sorted(every) == list(range(n))  # disjoint: no sample twice


LAUNCH_ENV = {"PYTHONPATH": str(Path(__file__).parents[1]), "OMP_NUM_THREADS": "1"}
NOT_LAUNCHED = ("WORLD_SIZE", "LOCAL_RANK")  # hotstart starts the processes, not an outer torchrun


def _script_module(name: str):
    """A module of tests/scripts/ (which the launched scripts import from their own folder)."""
    import importlib

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPT.parent))


@prestart.job("ddp:digits")
def _two_processes_on_digits(folder):
    """One launch of ddp_digits.py on 2 processes, with its EMA fits (scripts/ddp_ema.py), in the
    background from the start (tests/prestart.py): output in `folder`/run, EMA fits in `folder`/ema."""
    (folder / "run").mkdir()
    (folder / "ema").mkdir()
    return prestart.Job([sys.executable, SCRIPT, folder / "run", "--devices", "2", "--epochs", "2", "--lr-find",
                         "--ema-dir", folder / "ema", "--metrics-dir", folder / "metrics"], env=LAUNCH_ENV,
                        unset=NOT_LAUNCHED, timeout=400)


@pytest.fixture(scope="module")
def two_processes():
    """(the finished launch, its output folder, the EMA fits' folder)."""
    proc = prestart.result("ddp:digits")
    return proc, proc.folder / "run", proc.folder / "ema"


@pytest.mark.slow
@pytest.mark.prestart("ddp:digits")
def test_two_processes_on_digits(two_processes, digits):
    from hotstart import ImageClassificationSingle, load_learner, tasklearner

    proc, out, _ = two_processes
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = sorted((json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines()
                      if line.startswith("RESULT ")), key=lambda r: r["rank"])
    assert [r["rank"] for r in results] == [0, 1] and all(r["world_size"] == 2 for r in results)
    r0, r1 = results
    assert r0["history"] == r1["history"] and len(r0["history"]) == 2  # the same history, time included
    assert r1["written"] == []  # only rank 0 writes
    # seed= left out: the processes drew different seeds, so each split the data its own way (one
    # rank's validation samples in the other's training shard); now they agree on one
    assert r0["unseeded_seed"] == r1["unseeded_seed"]
    assert r0["lr_find"] == r1["lr_find"] and len(r0["lr_find"]["losses"]) >= 10  # one curve: losses averaged
    assert any("model" in w for w in r0["written"]) and any(w.startswith("ckpt") for w in r0["written"])
    table = [line for line in proc.stdout.splitlines() if not line.startswith("RESULT ")]
    assert sum("train_loss" in line for line in table) == 1  # one epoch table, from rank 0

    # the distributed validation counts every sample once: one process, final weights, same set
    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)
    n = r0["n_valid"]
    single = load_learner(out / "model", data=data, model=_mlp(task.channels), seed=0, batch_size=16,
                          progress=False)
    assert len(single.valid_loader.dataset) == n
    acc_ddp = r0["history"][-1]["accuracy"]
    assert round(single.validate()["accuracy"] * n) == round(acc_ddp * n)

    # one process with the same global batch (2 x 16) trains as well
    one = tasklearner(task, data, model=_mlp(task.channels), seed=0, batch_size=32, progress=False)
    one.fit_one_cycle(2, 1e-2)
    assert abs(one.history[-1]["accuracy"] - acc_ddp) <= 0.01, (one.history[-1]["accuracy"], acc_ddp)
    assert acc_ddp >= 0.9


@pytest.mark.slow
@pytest.mark.prestart("ddp:digits")
def test_metrics_in_one_process_and_in_two_run_the_same_code_and_equal_torchmetrics(two_processes):
    """scripts/ddp_metrics.py: every metric of hotstart.metrics over 5 batches, shared out among 2
    processes (gloo) by the launch, and all in this process (a PlainBackend): the same function,
    `read_on_host` through the backend's ``sum_tensors``, as the Metrics callback runs. Both equal
    torchmetrics over all batches in one process (counts exactly; float sums to rounding, which
    depends on the order they are added in); MeanDistance, which torchmetrics lacks, equals the
    mean of the distances computed directly. A target outside the classes on one process raises
    on both."""
    import torchmetrics
    import torchmetrics.classification as tmc

    from hotstart.learner.backend import PlainBackend

    ddp_metrics = _script_module("ddp_metrics")
    proc, _, _ = two_processes
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    two = [json.loads((proc.folder / "metrics" / f"rank{r}.json").read_text()) for r in (0, 1)]
    one = ddp_metrics.metrics_case(PlainBackend())
    assert [r["world_size"] for r in two] == [2, 2] and one["world_size"] == 1
    assert two[0]["n"] == two[1]["n"] == one["n"] == sum(ddp_metrics.BATCH_SIZES)
    assert two[0]["invalid_raised"] and two[1]["invalid_raised"] and one["invalid_raised"]

    units = lambda x: x[:, 1] * 3.0 + 4.0  # noqa: E731 - Denormalized(output=1)'s transform
    c, L = ddp_metrics.CLASSES, ddp_metrics.LABELS
    reference = {"accuracy": tmc.MulticlassAccuracy(c, average="micro"),
                 "multilabel_accuracy": tmc.MultilabelAccuracy(L, average="micro"),
                 "f1": tmc.MultilabelF1Score(L, average="macro"), "mse": torchmetrics.MeanSquaredError(),
                 "rmse_per_output_1": torchmetrics.wrappers.LambdaInputTransformer(
                     torchmetrics.MeanSquaredError(squared=False), transform_pred=units, transform_target=units),
                 "r2": torchmetrics.R2Score(), "pixel_accuracy": tmc.MulticlassAccuracy(c, average="micro"),
                 "mean_iou": tmc.MulticlassJaccardIndex(c, average="macro")}
    want = {}
    for name, (_, kind) in ddp_metrics.metrics().items():
        pairs = ddp_metrics.batches(kind)
        if name == "mean_distance":
            h, w = ddp_metrics.HW
            d = torch.cat([((p - t).reshape(len(p), -1, 2) * torch.tensor([w / 2, h / 2])).norm(dim=-1).reshape(-1)
                           for p, t in pairs])
            want[name] = float(d.double().mean())
            continue
        for p, t in pairs:
            reference[name].update(p.softmax(1) if name in ("accuracy", "pixel_accuracy", "mean_iou") else p, t)
        want[name] = float(reference[name].compute())
    assert set(want) == set(one["values"]) == set(two[0]["values"])
    counted = ("accuracy", "multilabel_accuracy", "f1", "pixel_accuracy", "mean_iou")  # ratios of integer counts
    for name, value in want.items():
        for run in (one, *two):
            if name in counted:
                assert run["values"][name] == value, (name, run["world_size"])
            else:
                assert run["values"][name] == pytest.approx(value, rel=1e-6), (name, run["world_size"])
    assert two[0]["values"] == two[1]["values"]  # every process reads the same numbers


@prestart.job("ddp:nan")
def _a_nan_loss_on_one_rank(folder):
    """ddp_nan.py with 2 processes, in the background from the start (tests/prestart.py); killed
    with the process it re-launched (its process group) if it runs past 120 s: a rank hung."""
    return prestart.Job([sys.executable, Path(__file__).parent / "scripts" / "ddp_nan.py", "--devices", "2"],
                        env=LAUNCH_ENV, unset=NOT_LAUNCHED, timeout=120)


@pytest.mark.slow
@pytest.mark.prestart("ddp:digits")
def test_ema_across_processes(two_processes, digits):
    """`EMA(decay=0.9)` on 2 processes (scripts/ddp_ema.py): every rank holds the same average, bit
    for bit (BatchNorm's statistics included, which each process updates from its own shard); it
    equals a one-process fit on the same global batches to float32 rounding (the two differ only in
    the order the per-sample gradients are summed: two means of 16 averaged across processes, one
    mean of 32 here); validation and `save` use the average; a fit stopped in its second epoch and
    resumed from the 2-process checkpoint ends as the uninterrupted one, bit for bit."""
    from safetensors.torch import load_file

    from hotstart import ImageClassificationSingle, load_learner, tasklearner
    from hotstart.learner import EMA

    ddp_ema = _script_module("ddp_ema")
    mlp, small_digits = ddp_ema.mlp, ddp_ema.small_digits
    proc, _, folder = two_processes
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r0, r1 = (json.loads((folder / f"result-rank{r}.json").read_text()) for r in (0, 1))
    state = {name: [load_file(folder / f"{name}-rank{r}.safetensors") for r in (0, 1)]
             for name in ("ema", "model", "resumed-ema", "resumed-model", "bn-ema", "bn-model")}

    def same(a, b):
        return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    for name, (rank0, rank1) in state.items():
        assert same(rank0, rank1), f"{name}: the ranks differ"
    assert r0 == {**r1, "rank": 0} and r0["updates"] == 14  # 2 epochs of 7 global batches
    assert "running_mean" in " ".join(state["bn-ema"][0])

    # validation and save use the average: the model holds it after the fit, and save wrote it
    ema = state["ema"][0]
    assert same(state["model"][0], ema)
    assert same(load_file(folder / "model" / "weights.safetensors"), ema)
    data, blocks = digits
    small = small_digits(data)
    task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)
    saved = load_learner(folder / "model", data=small, model=mlp(task.channels), seed=0, batch_size=16, progress=False,
                         precision="32-true")  # the precision the 2-process fits had
    n = len(saved.valid_loader.dataset)
    last = r0["history"][-1]
    checked = saved.validate()
    assert round(checked["accuracy"] * n) == round(last["accuracy"] * n)
    assert checked["loss"] == pytest.approx(last["valid_loss"], rel=1e-6)

    # one process, batches of 32 = the two processes' batches of 16 together (learner/data.py ShardSampler)
    one = tasklearner(task, small, model=mlp(task.channels), seed=0, batch_size=32, progress=False,
                      callbacks=[EMA(decay=0.9)], precision="32-true")  # as the 2-process fits: fp32 rounding
    one.fit_one_cycle(2, 1e-2)
    reference = one.cb(EMA).module.state_dict()
    assert one.cb(EMA).updates == r0["updates"]
    for k, v in reference.items():
        torch.testing.assert_close(ema[k], v, rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(r0["history"], one.history):
        for key in ("train_loss", "valid_loss", "accuracy"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-5), (key, mine, theirs)

    # the stopped fit resumed from the checkpoint its 2 processes wrote = the uninterrupted fit
    assert r0["crashed"] == "stopped at epoch 1, batch 4"
    assert same(state["resumed-ema"][0], ema) and same(state["resumed-model"][0], state["model"][0])
    strip = lambda history: [{k: v for k, v in row.items() if k != "time"} for row in history]  # noqa: E731
    assert strip(r0["resumed_history"]) == strip(r0["history"])


@pytest.mark.slow
@pytest.mark.prestart("ddp:nan")
def test_a_nan_loss_on_one_rank_stops_every_rank():
    """Rank 1's loss alone turns NaN (a training batch, then a validation batch): both ranks raise
    NonFiniteLossError together, instead of rank 0 waiting forever in the next all-reduce."""
    proc = prestart.result("ddp:nan")
    out, err = proc.stdout, proc.stderr
    if proc.timed_out:
        pytest.fail("a rank hung after another one's NaN loss:\n" + out[-2000:] + err[-2000:])
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    results = sorted((json.loads(line[len("RESULT "):]) for line in out.splitlines() if line.startswith("RESULT ")),
                     key=lambda r: r["rank"])
    assert [r["rank"] for r in results] == [0, 1], out[-3000:] + err[-3000:]
    r0, r1 = results
    assert r1["errors"]["train"].startswith("loss is nan at epoch 0, training batch 3")
    assert r0["errors"]["train"].startswith("loss is not finite on another process (this is rank 0")
    assert "training batch 3" in r0["errors"]["train"]
    assert r1["errors"]["valid"].startswith("loss is nan at epoch 0, validation batch 1")
    assert r0["errors"]["valid"].startswith("loss is not finite on another process (this is rank 0")


FIT_CHECKS = Path(__file__).parent / "scripts" / "ddp_fit_checks.py"


@prestart.job("ddp:small-valid")
def _a_validation_split_smaller_than_the_processes(folder):
    """ddp_fit_checks.py's ``small_valid`` case on 2 processes, killed after 120 s: a rank hung."""
    return prestart.Job([sys.executable, FIT_CHECKS, folder, "--devices", "2", "--cases", "small_valid"],
                        env=LAUNCH_ENV, unset=NOT_LAUNCHED, timeout=120)


def _fit_checks(name: str):
    """([rank 0's results, rank 1's], the job's folder) of a launch of ddp_fit_checks.py."""
    proc = prestart.result(name)
    if proc.timed_out:
        pytest.fail("a rank hung:\n" + proc.stdout[-2000:] + proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [json.loads((proc.folder / f"rank{r}.json").read_text()) for r in (0, 1)], proc.folder


@pytest.mark.slow
@pytest.mark.prestart("ddp:small-valid")
def test_a_validation_split_smaller_than_the_processes_validates_as_one_process():
    """1 validation sample on 2 processes (a model with BatchNorm): rank 0 waited in DDP's buffer
    broadcast at its first validation batch while rank 1, which had none, waited in the guard's
    all-reduce, until gloo's timeout. Now evaluation runs outside DDP's wrapper: `validate` before
    the fit, the fit's validation phases and `validate` over 5 samples (3 on rank 0, 2 on rank 1)
    finish, every rank holds the same numbers, and they are one process's on the same weights and
    samples (each sample counted once)."""
    from safetensors.torch import load_file
    from torch.utils.data import DataLoader

    from hotstart.learner.backend import PlainBackend

    checks = _script_module("ddp_fit_checks")
    (r0, r1), folder = _fit_checks("ddp:small-valid")
    assert "ok" in r0["small_valid"], r0["small_valid"]
    assert r0["small_valid"] == r1["small_valid"]  # the same history and validations on every rank
    got = r0["small_valid"]["ok"]
    assert len(got["history"]) == 2
    one = checks.learner(PlainBackend(), train=False)  # one process, the same initial weights and samples
    assert got["before"] == pytest.approx(one.validate(), rel=1e-6)
    one.task_model().load_state_dict(load_file(folder / "final.safetensors"))  # rank 0's weights at the end
    last, want = got["history"][-1], one.validate()
    assert last["accuracy"] == want["accuracy"] and last["valid_loss"] == pytest.approx(want["loss"], rel=1e-6)
    five = one.validate(DataLoader(checks.VALID5, batch_size=2))
    assert got["five"]["accuracy"] == five["accuracy"] and got["five"]["loss"] == pytest.approx(five["loss"], rel=1e-6)


@prestart.job("ddp:disagree")
def _processes_that_disagree(folder):
    """ddp_fit_checks.py's cases where the processes disagree, on 2 processes, killed after 120 s."""
    return prestart.Job([sys.executable, FIT_CHECKS, folder, "--devices", "2", "--cases",
                         "batch_size,epochs,checkpoint,resume_error,lr,after"],
                        env=LAUNCH_ENV, unset=NOT_LAUNCHED, timeout=120)


@pytest.mark.slow
@pytest.mark.prestart("ddp:disagree")
def test_processes_that_disagree_about_a_fit_are_refused_together():
    """Processes that disagree hung until gloo's 30-minute timeout: another batch size on one (4
    batches an epoch against 2), other epochs, a checkpoint folder that one process alone sees (it
    resumes, the other starts afresh), a resume folder missing on one process (it raised alone and
    the other waited), another peak rate. Now every process raises the same error when the fit
    starts, naming what differs and each rank's value, and a fit they agree on still runs."""
    (r0, r1), folder = _fit_checks("ddp:disagree")
    want = {"batch_size": ["batches per epoch: 2 on rank 0, 4 on rank 1 (another batch size",
                           "optimizer steps in all: 2 on rank 0, 4 on rank 1"],
            "epochs": ["epochs: 1 on rank 0, 2 on rank 1;"],
            "checkpoint": ["checkpoint to resume from: ckpt-000-000000002-1 on rank 0, none on rank 1 (the "
                           "checkpoint folder must be one folder that every process sees"],
            "resume_error": ["checkpoint to resume from: ckpt-000-000000002-1 on rank 0, none: UsageError: "
                             f"resume={str(folder / 'missing')!r}: no such folder"],
            "lr": ['"lr_max": 0.01, "moms": [0.95, 0.85, 0.95], "pct_start": 0.25} on rank 0, ',
                   '"lr_max": 0.02, "moms": [0.95, 0.85, 0.95], "pct_start": 0.25} on rank 1']}
    for case, parts in want.items():
        for rank, result in enumerate((r0, r1)):
            error = result[case].get("error", f"no error: {result[case]}")
            assert error.startswith("UsageError: the 2 processes of this run disagree about this fit"), (case, error)
            assert error.endswith(f"this is rank {rank}"), (case, error)
            for part in parts:
                assert part in error, (case, rank, error)
        assert r0[case]["error"][:-1] == r1[case]["error"][:-1]  # the same words on every rank
    assert "batches per epoch" not in r0["epochs"]["error"]  # only what differs is named
    assert r0["after"] == r1["after"] == {"ok": 1}  # the refusals left the processes in step


def test_processes_that_agree_pay_one_small_collective():
    """The start-of-fit check costs one collective of a few int64 per process, however long the
    schedule's or the checkpoint's texts; a rank whose row differs is named with its value."""
    from hotstart.learner.fit_agreement import check_processes_agree, fit_fingerprint
    from hotstart.learner.fit_state import FitState, constant_schedule

    class TwoRanks:  # rank 0 of 2; the other rank's row is this one's, changed by `other`
        world_size, global_rank, device = 2, 0, torch.device("cpu")

        def __init__(self, other=lambda row: row):
            self.other, self.calls = other, []

        def sum_tensors(self, tensors):
            self.calls.append([t.numel() for t in tensors])
            (table,) = tensors
            return [torch.stack([table[0], self.other(table[0].clone())])]

    class Seeded:
        seed = 0

    fs = FitState(n_epoch=3, n_iter=5, accumulate=1, fit_seed=1, fit_index=0, schedule=constant_schedule(1e-3))
    fingerprint = fit_fingerprint(Seeded(), fs)
    agreeing = TwoRanks()
    check_processes_agree(agreeing, fingerprint)
    assert agreeing.calls == [[2 * len(fingerprint)]]

    def more_batches(row):
        row[0] = 10  # "batches per epoch", the first field
        return row

    with pytest.raises(ValueError, match=r"disagree about this fit.*: batches per epoch: 5 on rank 0, 10 on rank 1 "
                                         r"\(another batch size"):
        check_processes_agree(TwoRanks(more_batches), fingerprint)


def test_sync_bn_on_cpu_is_a_clear_error(make_learner):
    """torch's DDP refuses SyncBatchNorm on CPU modules with a bare ValueError deep in its setup;
    hotstart says what to do before the model is wrapped."""
    learner = make_learner(sync_bn=True)
    learner.fit(1)  # one process: nothing to synchronize, sync_bn is ignored
    learner = make_learner(sync_bn=True)
    learner.backend.world_size = 2  # as a CPU run with 2 processes reports it
    with pytest.raises(ValueError, match="sync_bn=True needs CUDA"):
        learner.fit(1)


def test_torchrun_environment_sizes_the_run(monkeypatch):
    """An unchanged script under torchrun (or SLURM) gets a Fabric of the launcher's size."""
    from hotstart.learner.backend import launched_processes

    for k in ("TORCHELASTIC_RUN_ID", "LOCAL_WORLD_SIZE", "WORLD_SIZE", "SLURM_NTASKS", "SLURM_JOB_NAME"):
        monkeypatch.delenv(k, raising=False)
    assert launched_processes() is None
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert launched_processes() == (2, 2)
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    assert launched_processes() is None
    monkeypatch.delenv("TORCHELASTIC_RUN_ID")
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.delenv("LOCAL_WORLD_SIZE")
    monkeypatch.setenv("SLURM_NTASKS", "8")
    monkeypatch.setenv("SLURM_NTASKS_PER_NODE", "4")
    monkeypatch.setenv("SLURM_NNODES", "2")
    monkeypatch.setenv("SLURM_JOB_NAME", "train")
    assert launched_processes() == (4, 2)
    monkeypatch.setenv("SLURM_JOB_NAME", "bash")  # an interactive allocation: not launched by srun for us
    assert launched_processes() is None


def test_launch_detection_agrees_with_fabric_and_a_plain_run_does_not_import_it(monkeypatch):
    """torchrun / SLURM are recognised exactly when Fabric's cluster environments say so (a job
    without SLURM_JOB_NAME too), and a plain one-process run never imports lightning_fabric."""
    from lightning_fabric.plugins.environments import SLURMEnvironment, TorchElasticEnvironment

    from hotstart.learner.backend import launched_processes

    for k in ("TORCHELASTIC_RUN_ID", "LOCAL_WORLD_SIZE", "WORLD_SIZE", "SLURM_NTASKS", "SLURM_JOB_NAME",
              "SLURM_NTASKS_PER_NODE", "SLURM_NNODES"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("SLURM_NTASKS", "4")
    monkeypatch.setenv("SLURM_NTASKS_PER_NODE", "4")
    assert SLURMEnvironment.detect() and launched_processes() == (4, 1)  # srun sets no job name here
    monkeypatch.setenv("SLURM_JOB_NAME", "interactive")
    assert not SLURMEnvironment.detect() and launched_processes() is None
    monkeypatch.delenv("SLURM_NTASKS")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # without torchrun's run id: not a torchrun launch
    assert not TorchElasticEnvironment.detect() and launched_processes() is None

    code = ("import sys; from hotstart.learner.backend import launched_processes, make_backend; "
            "assert launched_processes() is None; make_backend(); "
            "assert 'lightning_fabric' not in sys.modules, 'imported'")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "TORCHELASTIC", "WORLD_SIZE"))}
    env["PYTHONPATH"] = str(Path(__file__).parents[1])
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
