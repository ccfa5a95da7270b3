#!/usr/bin/env bash
# Issue 8's comparison on the project's CPU tasks besides MNIST logreg
# (docs/compare/mnist-logreg has its own command in the README): salsa and
# salsa-val, the paper's Adam with warmup at its lr 1e-3, the
# learning-rate-free and schedule-free peers at their authors' defaults, and
# the grid-tuned shb-hand (and, on mlp, cosine and wsd; lr picked by the
# validation metric); resnet20 runs fewer methods (below). 3 seeds, 20 epochs on a prefix of the training set so
# that the whole comparison fits in about two hours on 2 cores. Each task's
# report, summary and figures are copied into docs/compare/<task>/, and the
# performance profile over every task goes to docs/compare/profile/.
# Usage: bash scripts/compare-tasks.sh [TASK ...]  (tasks: mlp cnn lstm resnet20)
# NOBUILD=1 uses the bin/salsa there is.
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=("$@"); [ ${#tasks[@]} -gt 0 ] || tasks=(mlp cnn lstm resnet20)
source scripts/build.sh
build_salsa
peers=salsa,salsa-val,adam-warmup,schedule-free-sgd,schedule-free-adamw,prodigy,dadapt-sgd,dog
for task in "${tasks[@]}"; do
	case $task in
	mlp) args=(--dataset mnist --model mlp --limit 7680 --methods $peers,shb-hand,cosine,wsd --grid shb-hand,cosine,wsd --lr0s 0.01,0.1,1) ;;
	cnn) args=(--dataset fashion-mnist --model cnn --limit 1920 --test-limit 2000 --methods $peers,shb-hand --grid shb-hand --lr0s 0.1,0.3,1) ;;
	# resnet20, the slowest (75–100 s a run here): salsa, Adam and the Schedule-Free pair against the tuned shb-hand
	resnet20) args=(--dataset fashion-mnist --model resnet20 --limit 640 --test-limit 500 --methods salsa,adam-warmup,schedule-free-sgd,schedule-free-adamw,shb-hand --grid shb-hand --lr0s 0.1,0.3,1) ;;
	lstm) args=(--dataset tinyshakespeare --model lstm --limit 25000 --test-limit 10000 --methods $peers,shb-hand --grid shb-hand --lr0s 0.3,1,3) ;;
	*) echo "unknown task $task" >&2; exit 2 ;;
	esac
	name=$(printf '%s' "${args[1]}-${args[3]}")
	dir=runs/compare/$name
	echo "== $name: salsa compare ${args[*]} --seeds 3 --epochs 20 --out $dir"
	./bin/salsa compare "${args[@]}" --seeds 3 --epochs 20 --out "$dir"
	mkdir -p "docs/compare/$name"
	cp "$dir/report.md" "$dir/summary.json" "$dir"/*.png "docs/compare/$name/"
done
dirs=$(ls -d runs/compare/*/ | grep -v profile | sed 's:/$::' | paste -sd,)
for t in seconds epochs; do
	./bin/salsa compare --profile "$dirs" --profile-time $t --out runs/compare/profile-$t
	mkdir -p docs/compare/profile-$t && cp runs/compare/profile-$t/profile.png runs/compare/profile-$t/profile.md docs/compare/profile-$t/
done
