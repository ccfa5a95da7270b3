#!/usr/bin/env bash
# probe_val=1 over the ten-seed runs (docs/parity/heldout8.md's rule). The
# change can alter a salsa-probe run only where its probe met two outliers in
# a row, so only the runs whose probe ended that way run again, up to that
# step S; where the validation loss overruled outliers the run is resumed to
# its end (marked "changed"), otherwise it is the run already there ("same").
#
#   bash scripts/probe-val.sh jobs runs/parity/seeds-h27 ... > JOBS
#       one line per such run: NAME<TAB>S<TAB>salsa train arguments
#   J=2 bash scripts/probe-val.sh run BIN OUT < JOBS
#       the jobs, J at a time, into OUT/NAME (checkpoints deleted)
#   bash scripts/probe-val.sh cmp OUT... -- runs/parity/seeds-h27 ...
#       per task and lr0: salsa-probe's median final test metric over the
#       ten seeds without and with probe_val (the changed runs of OUT...
#       replacing theirs), with the gaps to the tuned shb-hand's median
#   bash scripts/probe-val.sh ab 3 cnn 0.1
#       the cost: one run without and with probe_val=1, alternated, N
#       times (docs/parity: lstm 0.01, cnn 0.1, resnet20 0.1, mlp 0.1, h7 0.1)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/tasks.sh # tuned_lr, task_args
cmd=${1:-}; shift || true
case $cmd in
jobs)
	for d in "$@"; do
		for e in $(grep -l ",probe,.*,outlier$" "$d"/runs/salsa-probe-*/events.csv 2>/dev/null); do
			r=$(dirname "$e")
			s=$(grep ",probe,.*,outlier$" "$e" | tail -1 | cut -d, -f1)
			a=$(jq -r '.plan.options | ["--dataset",.dataset,"--model",.model,"--method",.method,"--lr0",(.lr0|tostring),"--epochs",(.epochs|tostring),"--batch",(.batch|tostring),"--seed",(.seed|tostring)]
				+ (if (.limit//0)>0 then ["--limit",(.limit|tostring)] else [] end)
				+ (if (.test_limit//0)>0 then ["--test-limit",(.test_limit|tostring)] else [] end)
				+ ([(.sets//[])[] | ["--set", "\(.[0])=\(.[1])"]] | add // [])
				| join(" ")' "$r/run.json")
			printf '%s/%s\t%s\t%s --set probe_val=1\n' "$(basename "$d")" "$(basename "$r")" "$s" "$a"
		done
	done
	;;
one) # BIN OUT LINE: one job
	B=$1 O=$2
	IFS=$'\t' read -r name s args <<<"$3"
	d=$O/$name
	mkdir -p "$d"
	# shellcheck disable=SC2086 # args is a list of words
	if ! $B train $args --max-steps "$s" --out "$d" --no-plots >"$d.log" 2>&1; then
		echo "FAIL $name prefix" >>"$d.log"
		exit 0
	fi
	if grep -q "outliers overruled" "$d/events.csv"; then
		$B train --resume --out "$d" --no-plots >>"$d.log" 2>&1 || echo "FAIL $name resume" >>"$d.log"
		echo changed >"$d/changed"
	elif grep -q "^$s,probe,.*,outlier$" "$d/events.csv"; then
		echo same >"$d/changed"
	else
		echo "odd: no outlier end at step $s" >"$d/changed"
	fi
	rm -f "$d/checkpoint.gob"
	;;
run) # BIN OUT < JOBS
	xargs -P "${J:-2}" -d '\n' -I{} bash scripts/probe-val.sh one "$1" "$2" "{}"
	;;
cmp)
	outs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do outs+=("$1"); shift; done
	shift
	for d in "$@"; do
		b=$(basename "$d")
		tl=$(tuned_lr "$d")
		lstm=0
		grep -q tinyshakespeare "$d/runs/salsa-probe-lr0.01-s1/run.json" && lstm=1
		col=6
		[ $lstm = 1 ] && col=7
		ref=$(for s in 1 2 3 4 5 6 7 8 9 10; do tail -1 "$d/runs/shb-hand-lr$tl-s$s/epochs.csv" | cut -d, -f$col; done | sort -g | awk '{a[NR]=$1} END {print (a[5]+a[6])/2}')
		for lr in 0.001 0.01 0.1; do
			old=() new=() nch=0
			for s in 1 2 3 4 5 6 7 8 9 10; do
				f=$d/runs/salsa-probe-lr$lr-s$s/epochs.csv g=$f
				for p in "${outs[@]}"; do
					c=$p/$b/salsa-probe-lr$lr-s$s
					if [ "$(cat "$c/changed" 2>/dev/null)" = changed ]; then g=$c/epochs.csv nch=$((nch + 1)); fi
				done
				old+=("$(tail -1 "$f" | cut -d, -f$col)") new+=("$(tail -1 "$g" | cut -d, -f$col)")
			done
			printf '%s\t%s\t%s\t%s\t%s\t%s|%s\n' "$b" "$lr" "$ref" "$lstm" "$nch" "${old[*]}" "${new[*]}"
		done
	done | awk -F'\t' '
	function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function gap(x, ref, lstm) { return lstm ? (ref - x) / ref * 100 : (x - ref) * 100 }
	function v(x, lstm) { return lstm ? sprintf("%.4g", x) : sprintf("%.2f%%", x * 100) }
	function ok(g, lstm) { return lstm ? g >= -2 : g >= -0.2 }
	BEGIN { print "| task | lr0 | runs changed | tuned shb-hand | salsa-probe (gap) | with probe_val (gap) |"; print "|---|---|---|---|---|---|" }
	{ split($6, p, "|"); no = split(p[1], o, " "); nn = split(p[2], w, " "); mo = med(o, no); mn = med(w, nn)
	  go = gap(mo, $3, $4); gn = gap(mn, $3, $4); u = $4 ? "%" : " pp"
	  printf "| %s | %s | %d | %s | %s (%+.2f%s)%s | %s (%+.2f%s)%s |\n", $1, $2, $5, v($3, $4), v(mo, $4), go, u, ok(go, $4) ? "" : " **miss**", v(mn, $4), gn, u, ok(gn, $4) ? "" : " **miss**" }'
	;;
ab) # N TASK LR0: one salsa-probe run of TASK (seed 1) without and with probe_val=1, N times alternated, in salsa compare
	# as the parity runs (10% held out, the tuned shb-hand runs of runs/parity/seeds-TASK copied in); the run's own seconds
	n=$1 t=$2 lr=$3
	task_args "$t"
	d=runs/parity/seeds-$t
	tl=$(tuned_lr "$d")
	tl2=$(ls -d "$d"/runs/shb-hand-lr*-s1 | sed 's/.*shb-hand-lr//; s/-s1$//' | grep -vx "$tl" | head -1)
	for i in $(seq "$n"); do
		for v in 0 1; do
			extra=()
			[ "$v" = 1 ] && extra=(--set probe_val=1)
			o=${TMPDIR:-/tmp}/probe-val-ab/$t-$v-$i
			rm -rf "$o"
			mkdir -p "$o/runs"
			cp -r "$d/runs/shb-hand-lr$tl-s1" "$d/runs/shb-hand-lr$tl2-s1" "$o/runs/"
			./bin/salsa compare --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(printf '%s\n' "$tl" "$tl2" | sort -g | paste -sd,)" \
				--start-lr0s "$lr" --seeds 1 --no-plots "${extra[@]}" --out "$o" >/dev/null 2>&1
			r=$o/runs/salsa-probe-lr$lr-s1
			echo "$t probe_val=$v try=$i run_seconds=$(tail -1 "$r/epochs.csv" | awk -F, '{print $(NF-1)}') asks=$(grep -c val_check "$r/events.csv") final_test_loss=$(tail -1 "$r/epochs.csv" | cut -d, -f5)"
		done
	done
	;;
*)
	sed -n '2,18p' "$0"
	exit 2
	;;
esac
