#!/usr/bin/env bash
# Wall time of salsa-budget, or METHOD (from lr0 0.01), against the tuned shb-hand, run
# in pairs, in alternating order, side by side under the same load: the seconds= of each run's
# final line, the process's CPU seconds, and the median ratios (of an even
# number of pairs, the mean of the two middle ones). Issue 9 asks for ≤ 1.10×.
# Usage: bash scripts/walltime.sh [PAIRS] [SALSA-BUDGET ARGS...]   (default 3 pairs per task)
# e.g. bash scripts/walltime.sh 3 --set probe=1 --set probe_early=1
# METHOD=salsa-probe times that method instead of salsa-budget.
# NOBUILD=1 uses the bin/salsa there is; TASKS="cnn lstm" measures some tasks only (default "logreg mlp cnn"; any task of the scoreboard in docs/parity/README.md, at its ten-seed tuned lr there).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}; shift || true
extra=("$@")
method=${METHOD:-salsa-budget}
source scripts/build.sh
build_salsa
source scripts/tasks.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# secs ARGS...: "WALL CPU", the run's seconds= (training and evaluation) and
# the CPU seconds (user + system) of the whole process, which other jobs on
# the machine disturb less than the wall clock
secs() {
	local TIMEFORMAT='%U %S' t w
	t=$( { time ./bin/salsa train "$@" --no-plots --out "$tmp/r" >"$tmp/out" 2>/dev/null; } 2>&1)
	w=$(grep -o 'seconds=[0-9.]*' "$tmp/out" | cut -d= -f2)
	rm -rf "$tmp/r"
	awk -v w="$w" -v t="$t" 'BEGIN { split(t, c, " "); printf "%s %.1f\n", w, c[1] + c[2] }'
}
echo "| task | shb-hand s | $method s | ratio | shb-hand CPU s | $method CPU s | CPU ratio |"
echo "|---|---|---|---|---|---|---|"
for task in ${TASKS:-logreg mlp cnn}; do
	# the tuned shb-hand lr of each task: its ten-seed rate on the scoreboard (docs/parity/README.md)
	lr=$(scoreboard_lr "$task")
	if [ -z "$lr" ]; then
		echo "task $task: no row on the scoreboard of docs/parity/README.md to take its tuned lr from (tasks: logreg, logreg-wd0, mlp, cnn, lstm, resnet20, h1–h99)" >&2
		exit 2
	fi
	# the task's compare arguments less --jobs, which salsa train does not take
	task_args "$task"
	common=()
	for ((i = 0; i < ${#args[@]}; i++)); do
		if [ "${args[i]}" = --jobs ]; then i=$((i + 1)); else common+=("${args[i]}"); fi
	done
	ratios=() cratios=()
	for i in $(seq "$pairs"); do
		# the order alternates (ABBA...), so that neither method always runs second
		if [ $((i % 2)) = 1 ]; then
			a=$(secs "${common[@]}" --method shb-hand --lr0 $lr)
			b=$(secs "${common[@]}" --method "$method" --lr0 0.01 "${extra[@]}")
		else
			b=$(secs "${common[@]}" --method "$method" --lr0 0.01 "${extra[@]}")
			a=$(secs "${common[@]}" --method shb-hand --lr0 $lr)
		fi
		read -r aw ac <<<"$a"
		read -r bw bc <<<"$b"
		ratios+=("$(awk -v a="$aw" -v b="$bw" 'BEGIN{printf "%.3f", b/a}')")
		cratios+=("$(awk -v a="$ac" -v b="$bc" 'BEGIN{printf "%.3f", b/a}')")
		echo "| $task | $aw | $bw | ${ratios[-1]} | $ac | $bc | ${cratios[-1]} |"
	done
	med() { sort -n | awk '{r[NR]=$1} END{printf "%.2f", (r[int((NR+1)/2)] + r[int(NR/2)+1]) / 2}'; }
	echo "| $task | | median | **$(printf '%s\n' "${ratios[@]}" | med)×** | | median | **$(printf '%s\n' "${cratios[@]}" | med)×** |"
done
