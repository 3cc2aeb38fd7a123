#!/usr/bin/env bash
# Two "nodes" on one machine: two torchrun launchers, one process each, rendezvous on 127.0.0.1.
# The training script is unchanged (hotstart sees torchrun's environment and asks Fabric for
# 1 process per node on 2 nodes). Prints each rank's RESULT line and checks that the ranks agree.
#   bash scripts/check_torchrun_nodes.sh [OUT]      (then, for comparison:)
#   torchrun --nproc-per-node 2 tests/scripts/ddp_digits.py OUT2
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-$(mktemp -d)}"
PORT="${PORT:-29533}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" OMP_NUM_THREADS=1
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$PORT")
torchrun "${common[@]}" --node-rank 0 tests/scripts/ddp_digits.py "$OUT" > "$OUT.node0.log" 2>&1 &
n0=$!
torchrun "${common[@]}" --node-rank 1 tests/scripts/ddp_digits.py "$OUT" > "$OUT.node1.log" 2>&1 &
n1=$!
wait "$n0" "$n1"
grep -h '^RESULT ' "$OUT.node0.log" "$OUT.node1.log" > "$OUT.results"
python - "$OUT.results" <<'PY'
import json, sys
rows = sorted((json.loads(l[len("RESULT "):]) for l in open(sys.argv[1])), key=lambda r: r["rank"])
assert [r["rank"] for r in rows] == [0, 1] and all(r["world_size"] == 2 for r in rows), rows
assert rows[0]["history"] == rows[1]["history"], "the ranks disagree"
assert rows[1]["written"] == [], rows[1]["written"]
h = rows[0]["history"][-1]
print(f"2 nodes x 1 process: ranks agree; accuracy {h['accuracy']:.4f} "
      f"({round(h['accuracy'] * rows[0]['n_valid'])}/{rows[0]['n_valid']}), valid_loss {h['valid_loss']:.4f}; "
      f"rank 0 wrote {len(rows[0]['written'])} files, rank 1 none")
PY
