"""The benchmark runner's plumbing on a trivial contender (not the real benchmarks: those take
minutes; run them with `python -m benchmarks.run --quick`)."""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: `benchmarks` is not installed

from benchmarks import run as bench  # noqa: E402

TRIVIAL = [sys.executable, str(bench.SCRIPTS / "_milestones.py")]


def test_runner_plumbing(tmp_path):
    order = []
    result = bench.compare("smoke", {"plain": TRIVIAL + ["2"], "other": TRIVIAL + ["3"]}, runs=2,
                           log=lambda msg: order.append(msg.split()[1]))
    assert order == ["plain", "other", "plain", "other"]  # alternating
    bench.add_ratios(result)
    for label, epochs in (("plain", 2), ("other", 3)):
        entry = result[label]
        assert entry["n"] == 2
        run = entry["runs"][0]
        assert run["rc"] == 0 and run["result"] == {"accuracy": 1.0}
        assert len(run["epochs"]) == epochs and run["epochs"][0]["images"] == 100
        m = entry["median"]
        # milestones are measured from process start, in order, and within the wall time
        assert 0 < m["imported"] < m["first_epoch_end"] <= m["fit_end"] <= m["wall_s"] + 0.05
        assert m["steady_ips"] > 0 and m["maxrss_mib"] > 1
    assert result["plain"]["ratio"]["wall_s"] == 1.0

    failing = bench.run_child([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert failing["rc"] == 3 and failing["milestones"] == {}

    report = {"comparisons": {"startup": {"workload": {}, "contenders": result, "notes": ["a note"], "runs_each": 2}}}
    report["targets"] = bench.check_targets(report)
    text = bench.table(report)
    assert "a note" in text and "plain" in text and "not measured" in text
    (tmp_path / "r.json").write_text(json.dumps(report))


def test_run_by_run_ratios_resist_a_slow_spell(tmp_path):
    """Runs alternate, so pairing run i of each contender cancels load that hits both in run i."""
    def runs(values, key):
        return [{"rc": 0, key: v} for v in values]

    plain = runs([5.0, 8.0, 5.0, 8.0, 5.0], "first_epoch_end")  # a slow spell in runs 2 and 4 ...
    other = runs([4.9, 7.8, 7.8, 7.8, 4.9], "first_epoch_end")  # ... and in 2, 3, 4 for the other
    result = {"plain": {"runs": plain, "median": {"first_epoch_end": 5.0}, "n": 5},
              "other": {"runs": other, "median": {"first_epoch_end": 7.8}, "n": 5}}
    bench.add_ratios(result)
    assert result["other"]["ratio"]["first_epoch_end"] == 7.8 / 5.0  # ratio of medians: 1.56x
    assert result["other"]["paired_ratio"]["first_epoch_end"] == 4.9 / 5.0  # run by run: 0.98x

    imports = {"torch": {"runs": runs([2.0, 3.0, 2.0], "wall_s"), "median": {"wall_s": 2.0}, "n": 3},
               "torch+hotstart": {"runs": runs([2.01, 3.02, 3.0], "wall_s"), "median": {"wall_s": 3.0}, "n": 3}}
    bench.add_import_extras(imports)
    assert imports["torch+hotstart"]["extra_s"] == 1.0
    assert abs(imports["torch+hotstart"]["extra_paired_s"] - 0.02) < 1e-9

    report = {"comparisons": {"startup": {"workload": {}, "contenders": result, "notes": [], "runs_each": 5},
                              "import": {"contenders": imports, "importtime": {}, "notes": [], "runs_each": 3}}}
    (tmp_path / "r.json").write_text(json.dumps(report))
    assert bench.main(["--table", str(tmp_path / "r.json")]) == 0
    text = bench.retable(json.loads((tmp_path / "r.json").read_text()))
    assert "run-by-run ratios to plain (median): other first_epoch_end 0.98x" in text
    assert "paired median +0.020s" in text


# --- the time-to-accuracy benchmark (benchmarks/tta.py) ------------------------------------------
from benchmarks import tta  # noqa: E402


def test_time_to_accuracy_is_the_first_epoch_that_reaches_the_target():
    epochs = [{"epoch": 1, "t": 10.0, "accuracy": 0.5}, {"epoch": 2, "t": 20.0, "accuracy": 0.8999999761581421},
              {"epoch": 3, "t": 30.0, "accuracy": 0.95}, {"epoch": 4, "t": 40.0, "accuracy": 0.7}]
    # 0.9 read from a float32 metric (torchmetrics, fastai) is 0.89999998: it reaches 0.9
    assert tta.time_to_accuracy(epochs, 0.9) == (20.0, 2)
    assert tta.time_to_accuracy(epochs, 0.95) == (30.0, 3)
    assert tta.time_to_accuracy(epochs, 0.96) == (None, None)  # never reached
    assert tta.time_to_accuracy([{"epoch": 1, "t": 1.0}], 0.1) == (None, None)  # no accuracy reported
    # a seed that never reached counts as infinitely slow: 2 of 3 must reach for a median
    assert tta.median_time([30.0, None, 10.0]) == 30.0
    assert tta.median_time([30.0, None, None]) is None and tta.median_time([]) is None


def test_tta_ratios_pair_runs_of_the_same_seed():
    def entry(times):
        runs = [{"rc": 0, "seed": s, "summary": {"tta_s": t, "final_accuracy": 0.9, "profile": {}}}
                for s, t in enumerate(times)]
        return tta.summarize_contender({"runs": runs})

    result = {"plain": entry([10.0, 20.0, 12.0]), "hotstart": entry([5.0, 30.0, None]), "fastai": entry([None, None, 9.0])}
    tta.add_tta_ratios(result)
    h = result["hotstart"]
    assert (h["reached"], h["n"], h["median_tta_s"]) == (2, 3, 30.0)
    assert h["ratio"] == {"plain": 30.0 / 12.0}  # fastai's median is "never": no ratio
    assert h["paired_ratio"]["plain"] == statistics.median([0.5, 1.5])  # seed 2: hotstart never reached
    assert "fastai" not in h["paired_ratio"]  # no seed that both reached
    assert result["fastai"]["median_tta_s"] is None and result["fastai"]["reached"] == 1


def test_tta_protocol_of_a_trivial_contender():
    """Every epoch's phases and accuracy come through `run_child`; the profile adds up."""
    run = bench.run_child(TRIVIAL + ["3", "0.5", "0.9", "0.7"])
    assert run["rc"] == 0 and [e["accuracy"] for e in run["epochs"]] == [0.5, 0.9, 0.7]
    for e in run["epochs"]:
        assert e["train_start"] < e["train_end"] < e["t"] and 0 <= e["data_s"] < e["train_end"] - e["train_start"]
    summary = tta.run_summary(run, 0.8)
    assert (summary["tta_s"], summary["reached_epoch"]) == (run["epochs"][1]["t"], 2)
    prof = summary["profile"]
    assert abs(sum(prof[k] for k in tta.PHASES) - prof["total"]) < 1e-9 and prof["total"] == summary["tta_s"]
    never = tta.run_summary(run, 0.95)
    assert never["tta_s"] is None and never["final_accuracy"] == 0.7
    assert never["profile"]["total"] == run["epochs"][-1]["t"]  # never reached: the whole fit


def test_tta_end_to_end_tiny(tmp_path, capsys):
    """Two real contenders, one seed, one epoch of 100 digits: the runner's JSON and table."""
    out = tmp_path / "tta.json"
    assert bench.main(["--only", "tta", "--tta-smoke", "--tta-tasks", "digits", "--tta-contenders", "plain,hotstart",
                       "--runs", "1", "--out", str(out)]) == 0
    comp = json.loads(out.read_text())["comparisons"]["tta_digits"]
    assert comp["target"] == tta.SMOKE_TASKS["digits"]["target"]
    for label in ("plain", "hotstart"):
        entry = comp["contenders"][label]
        (run,) = entry["runs"]
        assert run["rc"] == 0, run.get("stderr_tail")
        (epoch,) = run["epochs"]
        assert 0.0 <= epoch["accuracy"] <= 1.0 and run["result"]["accuracy"] == epoch["accuracy"]
        assert 0 < run["milestones"]["imported"] < run["milestones"]["ready"] <= epoch["train_start"] < epoch["t"]
        expect = epoch["t"] if epoch["accuracy"] >= comp["target"] - tta.REACH_TOLERANCE else None
        assert run["summary"]["tta_s"] == expect
        assert set(run["summary"]["profile"]) == {*tta.PHASES, "total"}
    assert comp["contenders"]["hotstart"]["runs"][0]["result"]["precision"]  # what its defaults chose
    text = capsys.readouterr().out
    assert "| plain |" in text and "| hotstart |" in text and "start+import" in text


def test_jpegdigits_folder_is_deterministic_and_read_alike(tmp_path, monkeypatch):
    """The learnable folder: train/ and valid/ of the digits' own split, the same bytes on every
    write, the same files and split for the torchvision contenders and for hotstart."""
    import tempfile

    monkeypatch.syspath_prepend(str(bench.SCRIPTS))
    import _data

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a"))
    (tmp_path / "a").mkdir()
    args = _data.parse_args(["--data=jpegdigits", "--n=25", "--size=32"])
    root = _data.jpeg_digits_root(args)
    assert [len(list((root / part).rglob("*.jpg"))) for part in ("train", "valid")] == [20, 5]
    assert not [p for p in root.parent.iterdir() if p != root]  # no temporary folder left behind
    images, labels, classes = _data.load(args)
    train, valid = _data.train_valid(args, len(images))
    assert (len(train), len(valid)) == (20, 5) and all("/valid/" in images.paths[i] for i in valid)
    assert images[0].size == (32, 32) and images[0].mode == "RGB" and classes == [str(c) for c in range(10)]

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "b"))
    (tmp_path / "b").mkdir()
    again = _data.jpeg_digits_root(args)
    assert again != root and all((again / p.relative_to(root)).read_bytes() == p.read_bytes() for p in root.rglob("*.jpg"))

    from hotstart import datasets

    data, (_, label) = datasets.ImageFolders(root)
    assert {k: len(v) for k, v in data.splits.items()} == {"train": 20, "valid": 5}
    assert [str(c) for c in label.classes] == classes
