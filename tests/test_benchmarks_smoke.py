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
