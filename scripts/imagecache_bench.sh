#!/bin/sh
# The image-folder family at mini-ImageNet's size: writes a synthetic folder of
# 60,000 84x84 colour JPEGs in mini-ImageNet's layout (not in the repository),
# loads it twice (the first start decodes and writes the cache, the second reads
# it) and times the sampling of a meta-batch against a meta-iteration of MAML's
# mini-ImageNet network. Usage: scripts/imagecache_bench.sh [DIR] [ITERATIONS]
set -eu
dir=${1:-/tmp/trmaml-miniimagenet-synthetic}
iters=${2:-3}
cd "$(dirname "$0")/.."
go build -o "${TMPDIR:-/tmp}/cachebench" ./tasks/imagefolder/internal/cachebench
bench="${TMPDIR:-/tmp}/cachebench"
[ -f "$dir/test.csv" ] || "$bench" -dir "$dir" -gen
rm -rf "$dir/.trmaml-cache"
echo "first start:"; "$bench" -dir "$dir" -load
echo "second start:"; "$bench" -dir "$dir" -load
echo "second start, again:"; "$bench" -dir "$dir" -load
du -sh "$dir/images" "$dir/.trmaml-cache"
"$bench" -dir "$dir" -share "$iters"
