#!/usr/bin/env bash
# Wall time of salsa-budget (from lr0 0.01) against the tuned shb-hand, run
# in pairs, in alternating order, side by side under the same load: the seconds= of each run's
# final line, and the median ratio. Issue 9 asks for ≤ 1.10×.
# Usage: bash scripts/walltime.sh [PAIRS] [SALSA-BUDGET ARGS...]   (default 3 pairs per task)
# e.g. bash scripts/walltime.sh 3 --set probe=1 --set probe_early=1
# NOBUILD=1 uses the bin/salsa there is; TASKS="cnn lstm" measures some tasks only (default "logreg mlp cnn"; also lstm, resnet20).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}; shift || true
extra=("$@")
[ -n "${NOBUILD:-}" ] || (cd gomlx && GOTOOLCHAIN=go1.27.0 GOEXPERIMENT=simd go build -o ../bin/salsa ./cmd/salsa)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
secs() { ./bin/salsa train "$@" --no-plots --out "$tmp/r" 2>/dev/null | grep -o 'seconds=[0-9.]*' | cut -d= -f2; rm -rf "$tmp/r"; }
echo "| task | shb-hand s | salsa-budget s | ratio |"
echo "|---|---|---|---|"
for task in ${TASKS:-logreg mlp cnn}; do
	case $task in
	logreg) common=(--dataset mnist --model logreg --epochs 30); lr=0.1 ;;
	mlp) common=(--dataset mnist --model mlp --limit 7680 --epochs 20); lr=1 ;;
	cnn) common=(--dataset fashion-mnist --model cnn --limit 1920 --test-limit 2000 --epochs 20); lr=1 ;;
	lstm) common=(--dataset tinyshakespeare --model lstm --limit 25000 --test-limit 10000 --epochs 20); lr=100 ;;
	resnet20) common=(--dataset fashion-mnist --model resnet20 --limit 640 --test-limit 500 --epochs 20); lr=0.3 ;;
	*) echo "unknown task $task (logreg mlp cnn lstm resnet20)" >&2; exit 2 ;;
	esac
	ratios=()
	for i in $(seq "$pairs"); do
		# the order alternates (ABBA...), so that neither method always runs second
		if [ $((i % 2)) = 1 ]; then
			a=$(secs "${common[@]}" --method shb-hand --lr0 $lr)
			b=$(secs "${common[@]}" --method salsa-budget --lr0 0.01 "${extra[@]}")
		else
			b=$(secs "${common[@]}" --method salsa-budget --lr0 0.01 "${extra[@]}")
			a=$(secs "${common[@]}" --method shb-hand --lr0 $lr)
		fi
		ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b/a}')")
		echo "| $task | $a | $b | ${ratios[-1]} |"
	done
	printf '%s\n' "${ratios[@]}" | sort -n | awk -v t=$task '{r[NR]=$1} END{printf "| %s | | median | **%.2f×** |\n", t, r[int((NR+1)/2)]}'
done
