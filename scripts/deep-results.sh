#!/usr/bin/env bash
# The deep-model results of the README: on each task, salsa, shb-hand (one
# hand-picked lr, cut ×0.1 after one and two thirds of the epochs),
# adam-warmup and salsa-val, seed 1, then overlay figures. Budgets are set so
# that a run finishes in a few minutes on a 2-core machine.
# Usage: bash scripts/deep-results.sh [OUT_DIR] [TASK ...]  (tasks: cnn lstm resnet20)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/deep}; shift || true
tasks=("$@"); [ ${#tasks[@]} -gt 0 ] || tasks=(cnn lstm resnet20)
mkdir -p bin "$out"
(cd gomlx && GOTOOLCHAIN=go1.27.0 GOEXPERIMENT=simd go build -o ../bin/salsa ./cmd/salsa)
for task in "${tasks[@]}"; do
	case $task in
	cnn) common=(--dataset fashion-mnist --model cnn --epochs 3); hand=(--lr0 0.1 --drops 1,2) ;;
	resnet20) common=(--dataset fashion-mnist --model resnet20 --epochs 3 --limit 15360); hand=(--lr0 0.1 --drops 1,2) ;;
	lstm) common=(--dataset tinyshakespeare --model lstm --epochs 3 --limit 500000); hand=(--lr0 1 --drops 1,2) ;;
	*) echo "unknown task $task" >&2; exit 2 ;;
	esac
	runs=()
	for m in salsa shb-hand adam-warmup salsa-val; do
		dir=$out/$task-$m; runs+=("$dir")
		[ -f "$dir/epochs.csv" ] && [ "$(wc -l <"$dir/epochs.csv")" -gt 3 ] && continue
		rm -rf "$dir"
		extra=(--lr0 0.01)
		[ $m = shb-hand ] && extra=("${hand[@]}")
		[ $m = adam-warmup ] && extra=(--lr0 0.001)
		printf '%-22s ' "$task-$m"
		./bin/salsa train "${common[@]}" --method $m "${extra[@]}" --seed 1 --out "$dir" 2>"$dir.log" | grep '^final:'
	done
	IFS=,; ./bin/salsa plot --runs "${runs[*]}" --out "$out/$task-compare"; unset IFS
done
