"""The benchmark runner's plumbing on a trivial contender (not the real benchmarks: those take
minutes; run them with `python -m benchmarks.run --quick`)."""
import json
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
