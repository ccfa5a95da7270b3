#!/usr/bin/env bash
# The deep-model results of the README. On each task: salsa with seeds 1-3;
# shb-hand over a small lr grid (cut ×0.1 after one and two thirds of the
# epochs) with seed 1, then the grid's best lr (highest test accuracy, lowest
# test perplexity) with seeds 2 and 3; adam-warmup and salsa-val with seed 1.
# Budgets are 20 epochs on a prefix of the training set, so that SALSA's tests
# (which need θ·k > N_min = one epoch's steps, i.e. 8 epochs) can act, and a
# run finishes in a few minutes on a 2-core machine. Each run's final: line
# is kept in DIR.final; the summary table goes to OUT_DIR/summary.md.
# Usage: bash scripts/deep-results.sh [OUT_DIR] [TASK ...]  (tasks: cnn lstm resnet20)
# NOBUILD=1 uses the bin/salsa there is.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/deep}; shift || true
tasks=("$@"); [ ${#tasks[@]} -gt 0 ] || tasks=(cnn lstm resnet20)
mkdir -p bin "$out"
source scripts/build.sh
build_salsa

# run NAME METHOD LR0 SEED: one run into $out/$task-NAME-sSEED, skipped when done.
run() {
	local dir=$out/$task-$1-s$4
	runs+=("$dir")
	[ -s "$dir.final" ] && return 0
	rm -rf "$dir"
	printf '%-34s ' "$(basename "$dir")"
	./bin/salsa train "${common[@]}" --method "$2" --lr0 "$3" --seed "$4" --out "$dir" --no-plots 2>"$dir.log" | grep '^final:' | tee "$dir.final"
}
# metric DIR: the run's test accuracy or perplexity.
metric() { grep -o 'test_\(acc\|ppl\)=[0-9.]*' "$1.final" | cut -d= -f2; }

for task in "${tasks[@]}"; do
	case $task in
	cnn) common=(--dataset fashion-mnist --model cnn --epochs 20 --limit 7680); grid=(0.03 0.1 0.3 1); better=max ;;
	resnet20) common=(--dataset fashion-mnist --model resnet20 --epochs 20 --limit 1920 --test-limit 2000); grid=(0.03 0.1 0.3 1); better=max ;;
	lstm) common=(--dataset tinyshakespeare --model lstm --epochs 20 --limit 100000); grid=(0.1 0.3 1 3); better=min ;;
	*) echo "unknown task $task" >&2; exit 2 ;;
	esac
	runs=()
	for s in 1 2 3; do run salsa salsa 0.01 $s; done
	best= bestm=
	for lr in "${grid[@]}"; do
		run "shb-hand-lr$lr" shb-hand "$lr" 1
		m=$(metric "$out/$task-shb-hand-lr$lr-s1")
		if [ -z "$best" ] || awk -v a="$m" -v b="$bestm" -v w=$better 'BEGIN{exit !((w=="max" && a>b) || (w=="min" && a<b))}'; then
			best=$lr bestm=$m
		fi
	done
	for s in 2 3; do run "shb-hand-lr$best" shb-hand "$best" $s; done
	run adam-warmup adam-warmup 0.001 1
	run salsa-val salsa-val 0.01 1
	echo "$task: best shb-hand lr $best" | tee "$out/$task-best-lr"
	# Overlay figures of seed 1 of each method, the grid's best lr.
	IFS=,; ./bin/salsa plot --runs "$out/$task-salsa-s1,$out/$task-shb-hand-lr$best-s1,$out/$task-adam-warmup-s1,$out/$task-salsa-val-s1" --out "$out/$task-compare"; unset IFS
	for d in "${runs[@]}"; do ./bin/salsa plot --run "$d" >/dev/null 2>&1 || true; done
done
