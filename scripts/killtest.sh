#!/usr/bin/env bash
# Kill-at-random-moments check: trains a short config once without
# interruption, then N times starts the same run, kills it with SIGKILL at a
# random moment (1 to 3 times, also during resumes), finishes it with
# `trmaml resume` (or `trmaml train` again if the kill came before config.yaml
# was written), and compares result.json (without its timing block and its
# own sha256, which covers the timing) and model.json with the uninterrupted
# run's.
#   scripts/killtest.sh [N] [OUT]      (default N=20, OUT=a new temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
go build -o "$out/trmaml" ./cmd/trmaml
cat > "$out/short.yaml" <<'YAML'
name: killtest
algorithm: trmaml
model: {kind: mlp, mlp: {hidden: [16, 16]}}
meta: {iterations: 600, batch: 10}
eval: {every: 100, instances: 490, train_instances: 100, query: 50, batch: 245}
YAML
start=$(date +%s.%N)
"$out/trmaml" train -config "$out/short.yaml" -out "$out/ref" >/dev/null 2>&1
span=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted run: ${span}s"
same() { # result.json without timing (and its hash), and model.json, equal?
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(d + "/result.json")) for d in sys.argv[1:])
for r in (a, b):
    r.pop("timing")
    r.pop("sha256", None)  # result.json's own hash, which covers its timing
ma, mb = (open(d + "/model.json").read() for d in sys.argv[1:])
sys.exit(0 if a == b and ma == mb else 1)
PY
}
# What a user does next: resume, or, if the kill came before config.yaml was
# written, train again into the same directory.
next() {
  if [ -f "$1/config.yaml" ]; then echo "resume -run $1"; else echo "train -config $out/short.yaml -out $1"; fi
}
ok=0
for i in $(seq 1 "$n"); do
  dir="$out/run$i"
  kills=$((1 + RANDOM % 3))
  cmd=(train -config "$out/short.yaml" -out "$dir")
  moments=""
  for k in $(seq 1 "$kills"); do
    "$out/trmaml" "${cmd[@]}" >/dev/null 2>&1 &
    pid=$!
    t=$(python3 -c "import random; print(round(random.uniform(0, $span), 3))")
    sleep "$t"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    moments="$moments ${t}s"
    cmd=($(next "$dir"))
  done
  if "$out/trmaml" $(next "$dir") >"$out/resume$i.log" 2>&1 && same "$out/ref" "$dir"; then
    ok=$((ok + 1)); verdict=identical
  else
    verdict="DIFFERENT or failed (see $out/resume$i.log)"
  fi
  echo "run $i: killed at$moments: $verdict"
done
echo "$ok of $n resumed identically"
[ "$ok" -eq "$n" ]
