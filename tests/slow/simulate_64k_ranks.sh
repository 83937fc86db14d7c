#!/usr/bin/env bash
# A 64 K-rank synthetic trace written by `commgauge synth` (one container file, one descriptor)
# and replayed by `commgauge simulate`: under model none the prediction is exactly the
# computation, 3 iterations x 10 us; under LogGP with GigE contention (local updates) it must finish too.
# Usage: simulate_64k_ranks.sh COMMGAUGE LINK.json
set -euo pipefail
commgauge=$1
link=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$commgauge" synth halo3d --ranks 65536 --iterations 3 --bytes 1KiB --compute-us 10 \
  --ranks-per-node 16 -o "$work/halo"
"$commgauge" simulate "$work/halo" --model none --json "$work/none.json" | grep -E "predicted|replay:"
predicted=$(grep -o '"predicted_ps": *[0-9]*' "$work/none.json" | head -1 | grep -o '[0-9]*$')
if [ "$predicted" != 30000000 ]; then
  echo "FAIL: model none predicted $predicted ps, expected 30000000 (3 x 10 us)" >&2
  exit 1
fi
"$commgauge" simulate "$work/halo" --profile "$link" --model loggp --contention gige \
  --json "$work/fair.json" | grep -E "predicted|replay:|contention"
grep -q '"model": *"gige"' "$work/fair.json"
echo "simulate_64k_ranks: passed"
