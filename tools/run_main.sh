#!/usr/bin/env bash
# The main job: build stepc, compile the default model (models/byte_lm.mlir at its
# `small` configuration: HomebrewNLP's small byte-level LM as it trains it, a reversible
# MomentumNet) to a native training executable, and train it on the built-in corpus, showing the
# loss fall.
# Usage: tools/run_main.sh [MODEL.mlir [STEPS [CONFIG]]]   (CONFIG: one of the model's configs)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tools/setup.sh
tools/bazel.sh build //compiler/Driver:stepc //compiler/Driver:stepc-opt
stepc=./bazel-bin/compiler/Driver/stepc
model="${1:-models/byte_lm.mlir}"
steps="${2:-100}"
config="${3-}"
[[ $# -eq 0 ]] && config=small
name="$(basename "$model" .mlir)${config:+_$config}"
flags=()
[[ -n $config ]] && flags=(--config="$config")
mkdir -p build
$stepc check "$model" "${flags[@]}"
echo
echo "== stepc compile $model ${flags[*]} -o build/$name =="
$stepc compile "$model" "${flags[@]}" -o "build/$name"
echo
"build/$name" info
echo
echo "== build/$name train --steps $steps (built-in corpus, validated on its held-out text every 20 steps; metrics in build/$name.metrics.jsonl) =="
rm -rf "build/$name.checkpoints"
"build/$name" train --steps "$steps" --metrics "build/$name.metrics.jsonl" --eval-every 20 --eval-batches 4 \
  --checkpoint-dir "build/$name.checkpoints"
python3 - "build/$name.metrics.jsonl" <<'PY'
import json, sys
m = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
k = max(1, min(10, len(m) // 4))
first = sum(x["loss"] for x in m[:k]) / k
last = sum(x["loss"] for x in m[-k:]) / k
ms = sorted(x["step_ms"] for x in m[1:] or m)[len(m[1:] or m) // 2]
print(f"loss: {first:.3f} (mean of the first {k} steps) -> {last:.3f} (last {k}); "
      f"median step {ms:.0f} ms")
PY
# The run as a picture: loss (raw and smoothed), validation loss, lr, grad norm, throughput.
echo "plot: $(tools/plot_metrics.py "build/$name.metrics.jsonl" -o "build/$name.png" --title "$name")"
# What the trained model writes (a language model; other models cannot sample).
if "build/$name" sample --help > /dev/null 2>&1 && [[ $("build/$name" info) == *token_stream* ]]; then
  echo
  echo "== build/$name sample --checkpoint-dir build/$name.checkpoints --prompt 'The ' --tokens 160 --temperature 0.8 --seed 1 =="
  "build/$name" sample --checkpoint-dir "build/$name.checkpoints" --prompt "The " --tokens 160 \
    --temperature 0.8 --seed 1
fi
