#!/usr/bin/env bash
# Why our Omniglot meta-test accuracies differ from the paper's: evaluate
# the same trained runs under the image preparation and evaluation protocol
# of the paper's code, one difference at a time, and tabulate.
#   scripts/omniglot_protocol.sh OUT.md RUNDIR [RUNDIR...]
# For every finished (or checkpointed) Omniglot run it writes, beside
# result.json (ours: bilinear resize, rotated evaluation instances),
#   evaluation-task.omniglot.rotate_eval=false.json
#   evaluation-task.omniglot.resize=nearest.json
#   evaluation-task.omniglot.resize=nearest,task.omniglot.rotate_eval=false.json
#   evaluation-task.omniglot.resize=lanczos,task.omniglot.rotate_eval=false.json
# with `trmaml eval -set` (the run's own seed and instance count; existing
# files are kept, so an interrupted call resumes), then OUT.md: per run the
# meta-test and meta-training mean and worst alphabet under each protocol,
# and the alphabets that move most. TRMAML=path selects the binary; SETS="F=V ..."
# adds changes to every evaluation, ours included (then re-evaluated too),
# e.g. SETS=eval.final_instances=500 for a quick look.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OUT.md RUNDIR [RUNDIR...]" >&2
  exit 2
fi
out=$1
shift
TRMAML=${TRMAML:-trmaml}
SETS=${SETS:-}
variants=(
  ""
  "task.omniglot.rotate_eval=false"
  "task.omniglot.resize=nearest"
  "task.omniglot.resize=nearest task.omniglot.rotate_eval=false"
  "task.omniglot.resize=lanczos task.omniglot.rotate_eval=false"
)
for run in "$@"; do
  for v in "${variants[@]}"; do
    v=$(echo $v $SETS)
    [ -n "$v" ] || continue # ours without changes is result.json
    args=()
    for s in $v; do args+=(-set "$s"); done
    file="$run/evaluation-$(printf '%s\n' $v | LC_ALL=C sort | paste -sd,).json" # eval names the file by the sorted changes
    if [ -s "$file" ]; then continue; fi
    echo "== $run: $v" >&2
    "$TRMAML" eval -run "$run" "${args[@]}" >&2
  done
done
python3 - "$out" "$SETS" "$@" <<'PY'
import json, os, sys
out, extra, runs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def file(changes):
    sets = sorted(changes + extra)
    return "evaluation-" + ",".join(sets) + ".json" if sets else "result.json"
protocols = [
    ("ours: bilinear, rotated evaluation", file([])),
    ("bilinear, unrotated evaluation", file(["task.omniglot.rotate_eval=false"])),
    ("nearest, rotated evaluation", file(["task.omniglot.resize=nearest"])),
    ("paper's code: nearest, unrotated evaluation", file(["task.omniglot.resize=nearest", "task.omniglot.rotate_eval=false"])),
    ("Lanczos, unrotated evaluation", file(["task.omniglot.resize=lanczos", "task.omniglot.rotate_eval=false"])),
]
lines = []
for run in runs:
    res = {}
    for name, f in protocols:
        p = os.path.join(run, f)
        if not os.path.exists(p) and f == "result.json":
            p = os.path.join(run, "evaluation.json")
        if os.path.exists(p):
            res[name] = json.load(open(p))
    if not res:
        continue
    any_ = next(iter(res.values()))
    lines.append(f"### {os.path.basename(os.path.normpath(run))} ({any_['algorithm']}, seed {any_['seed']}, iteration {any_['iterations']})\n")
    lines.append("| protocol | meta-test mean | meta-test worst | meta-train mean | meta-train worst |")
    lines.append("|---|---:|---:|---:|---:|")
    for name, _ in protocols:
        r = res.get(name)
        if r is None:
            continue
        t, m = r["meta_test"], r["meta_train"]
        lines.append(f"| {name} | {100*t['mean']:.1f} | {100*t['worst']:.1f} | {100*m['mean']:.1f} | {100*m['worst']:.1f} |")
    base, paper = res.get(protocols[0][0]), res.get(protocols[3][0])
    if base and paper:
        moves = []
        for split in ("meta_test", "meta_train"):
            for task, a, b in zip(base[split]["tasks"], base[split]["per_task"], paper[split]["per_task"]):
                moves.append((b - a, split.replace("_", "-"), task, a, b))
        moves.sort()
        lines.append("\nAlphabets that move most from ours to the paper's code's protocol:\n")
        lines.append("| alphabet | split | ours | paper's code | change |")
        lines.append("|---|---|---:|---:|---:|")
        for d, split, task, a, b in moves[:5] + moves[-3:]:
            lines.append(f"| {task} | {split} | {100*a:.1f} | {100*b:.1f} | {100*d:+.1f} |")
    lines.append("")
open(out + ".tmp", "w").write("\n".join(lines) + "\n")
os.replace(out + ".tmp", out)
PY
echo "written to $out" >&2
