#!/usr/bin/env bash
# The growth of ‖x‖² over a run, from the statistics every run logs
# (docs/parity/norm.md). A step's update x_{k+1} = x_k − α_k d_k changes the
# squared norm by ‖x_{k+1}‖² − ‖x_k‖² = −2α_k⟨x_{k+1}, d_k⟩ − α_k²‖d_k‖²,
# and steps.csv has α_k (lr), ⟨x_{k+1}, d_k⟩ (x1d) and ‖d_k‖² (d2), so the
# sum over the run is ‖x_T‖² − ‖x_0‖² exactly, up to float rounding. A
# rollback of salsa-probe's probe (events.csv: a decay with reason
# "rollback") puts back the copy kept at the end of the last accepted
# window whose copy the next loss confirmed; the steps between that copy and
# the rollback are left out of the sum (the band prototype's "norm cap" ends
# the probe without one). A run whose decay rolled back in another way (the
# warm-up's guard) prints "n/a".
#
# Usage:
#   bash scripts/norm.sh growth RUNDIR...   one line a run: its name, the growth, its final test metric
#                                           (perplexity for tinyshakespeare, accuracy otherwise)
#   bash scripts/norm.sh table DIR...       per salsa compare directory: the median growth and final metric of
#                                           each shb-hand rate and each salsa-probe lr0, the tuned rate marked;
#                                           then every salsa-probe run of all the directories counted by its
#                                           growth, and by whether it ends within the bar of its directory's
#                                           tuned shb-hand median (2% of perplexity, 0.2 points of accuracy)
#   [BAND=DIR] bash scripts/norm.sh pairs TASK:LR...
#                                           the prediction's lstms over seeds 1–3: per task, the median growth and final
#                                           perplexity of shb-hand at LR, the ten-seed tuned rate (runs/norm/TASK-ref,
#                                           or runs/norm/TASK), of salsa-probe from lr0 1e-2 (runs/norm/TASK-base,
#                                           or runs/norm/TASK) and of the band (runs/normproto/TASK), and the seeds on
#                                           which the band ends lower
#   [THIRD=1] bash scripts/norm.sh caps N0 RUNDIR...
#                                           probe_norm_cap's decisions (its fifth version, a cap only on a measured
#                                           ratio; THIRD=1: the third version's, 4 where no ratio is measured) worked
#                                           out from salsa-probe runs' logs (docs/parity/norm.md): per run, the
#                                           decay's level, the rate of the accepted window after which the cap ends
#                                           the climb ("-" when it does not) and the level it gives; N0 is ‖x_0‖²
#   bash scripts/norm.sh same TASK:N0...   the same-level pairs of the third version's screens: per salsa-probe run of
#                                           runs/parity/seeds-TASK that the third version capped at the level it had
#                                           (within 0.1%), the task, run, final test metric without and with the cap
#                                           (runs/normproto3/TASK, else runs/normproto3x/TASK) and the metric's kind
#                                           (ppl or acc); docs/parity/same-level-noise.py reads them on stdin
#   bash scripts/norm.sh run TASK LRS       salsa-probe from lr0 1e-2 and shb-hand over LRS (comma-separated, at least
#                                           two rates: salsa compare tunes over them; docs/parity/norm.md has the
#                                           commands for one),
#                                           seeds 1–3 (SEEDS), into runs/norm/TASK (NOBUILD=1: bin/salsa as it is)
set -euo pipefail
cd "$(dirname "$0")/.."

# growth RUNDIR: the line for one run.
growth() {
	local d=$1 field=6
	grep -q '"dataset": "tinyshakespeare"' "$d/run.json" && field=7
	local span
	# span: "copy rollback" (0 0 when the run rolled back nowhere), or "n/a"
	span=$(awk -F, '
		NR == 1 { next }
		$2 == "probe" {
			reason = $8
			if (reason == "outlier at copy") { copy = prev; next }
			if ($5 == 1 && reason != "ends on outlier") { prev = copy; copy = $1 }
			next
		}
		$2 == "decay" && $4 == "rollback" { rb = $1; next }
		$2 == "decay" && $4 != "" && $4 != "budget" && $4 != "probe" && $4 != "norm cap" { bad = 1 }
		END { if (bad) print "n/a"; else printf "%d %d\n", (rb ? copy : 0), rb + 0 }
	' "$d/events.csv" 2>/dev/null || echo "0 0")
	local metric
	metric=$(tail -1 "$d/epochs.csv" | cut -d, -f$field)
	if [ "$span" = n/a ]; then
		printf '%s n/a %s\n' "$(basename "$d")" "$metric"
		return
	fi
	set -- $span
	zcat "$d/steps.csv.gz" | awk -F, -v copy="$1" -v rb="$2" -v name="$(basename "$d")" -v metric="$metric" '
		NR == 1 { next }
		rb > 0 && $1 > copy && $1 <= rb { next }
		{ a = $2; s += -2 * a * $4 - a * a * $5 }
		END { printf "%s %.0f %s\n", name, s, metric }'
}

# median: an awk function, the median of a space-separated list of numbers
# (the mean of the middle two for an even count), for table and pairs.
median='
	function median(list,   n, v, i, j, t) {
		n = split(list, v, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}'

case ${1:-} in
growth)
	shift
	for d in "$@"; do growth "$d"; done
	;;
table)
	shift
	for dir in "$@"; do
		tuned=$(jq -r '.rows[] | select(.method == "shb-hand") | .lr0' "$dir/summary.json")
		for r in "$dir"/runs/*; do
			printf '%s %s ' "$(basename "$dir")" "$tuned"
			growth "$r"
		done
	done | awk "$median"'
		$4 == "n/a" { na++; next }
		{
			row = $3; sub(/-s[0-9]+$/, "", row)
			key = $1 SUBSEP row
			if (!(key in g)) order[++n] = key
			g[key] = g[key] " " $4; m[key] = m[key] " " $5
			if (row ~ /^salsa-probe/) { nrun++; rd[nrun] = $1; rg[nrun] = $4; rm[nrun] = $5 }
			ppl[$1] = ($5 > 1); tl[$1] = $2
			if (row == "shb-hand-lr" $2) { tg[$1] = tg[$1] " " $4; tm[$1] = tm[$1] " " $5 }
		}
		END {
			printf "%-14s %-24s %9s %9s\n", "dir", "row", "growth", "final"
			for (i = 1; i <= n; i++) {
				split(order[i], k, SUBSEP)
				printf "%-14s %-24s %9.0f %9.4g%s\n", k[1], k[2], median(g[order[i]]), median(m[order[i]]), (k[2] == "shb-hand-lr" tl[k[1]] ? " (tuned)" : "")
			}
			split("500 1000 1500 3000 6000 10000 15000", edge, " ")
			for (i = 1; i <= nrun; i++) {
				ref = median(tm[rd[i]])
				ok = ppl[rd[i]] ? rm[i] <= 1.02 * ref : rm[i] >= ref - 0.002
				for (b = 1; b <= 7 && rg[i] + 0 >= edge[b] + 0; b++) ;
				cnt[b]++; within[b] += ok
			}
			print ""
			printf "%-18s %5s %13s\n", "growth of ‖x‖²", "runs", "within the bar"
			for (b = 1; b <= 8; b++) {
				lo = b == 1 ? "" : edge[b - 1]; hi = b == 8 ? "" : edge[b]
				printf "%-18s %5d %13d\n", (lo == "" ? "< " hi : hi == "" ? "≥ " lo : lo "–" hi), cnt[b], within[b]
			}
			if (na) printf "(%d runs rolled back by the guard: left out)\n", na
		}'
	;;
pairs)
	shift
	for spec in "$@"; do
		t=${spec%%:*} tl=${spec#*:}
		ref=runs/norm/$t-ref base=runs/norm/$t-base
		if [ ! -d "$ref" ]; then
			ref=runs/norm/$t base=runs/norm/$t
		fi
		for s in 1 2 3; do
			printf '%s %s ref %s\n' "$t" "$tl" "$(growth "$ref/runs/shb-hand-lr$tl-s$s")"
			printf '%s %s base %s\n' "$t" "$tl" "$(growth "$base/runs/salsa-probe-lr0.01-s$s")"
			printf '%s %s band %s\n' "$t" "$tl" "$(growth "${BAND:-runs/normproto}/$t/runs/salsa-probe-lr0.01-s$s")"
		done
	done | awk "$median"'
		{ k = $1 SUBSEP $3; g[k] = g[k] " " $5; m[k] = m[k] " " $6; lr[$1] = $2
		  if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
		  if ($3 == "base") b[$1, ++nb[$1]] = $6; if ($3 == "band") w[$1, ++nw[$1]] = $6 }
		END {
			print "| task | tuned shb-hand: growth → perplexity | salsa-probe from lr0 1e-2 | with the band | seeds better |"
			print "|---|---|---|---|---|"
			for (i = 1; i <= n; i++) {
				t = order[i]; better = 0
				for (s = 1; s <= 3; s++) better += w[t, s] < b[t, s]
				printf "| %s | %.0f → %.3f (lr %s) | %.0f → %.3f | %.0f → %.3f | %d of 3 |\n", t, median(g[t SUBSEP "ref"]), median(m[t SUBSEP "ref"]), lr[t],
					median(g[t SUBSEP "base"]), median(m[t SUBSEP "base"]), median(g[t SUBSEP "band"]), median(m[t SUBSEP "band"]), better
			}
		}'
	;;
caps)
	n0=$2
	shift 2
	for d in "$@"; do
		# the probe's windows run between its events (a copy's outlier check is
		# not a window's end); a window's growth is the sum of its steps'
		awk -F, -v n0="$n0" -v third="${THIRD:-}" -v name="$(basename "$d")" '
			FNR == NR {
				if (FNR == 1) next
				if ($2 == "probe" && $8 != "outlier at copy") { ps[++np] = $1; acc[np] = $5 }
				if ($2 == "decay" && lvl == "") lvl = $3
				next
			}
			FNR == 1 { next }
			{ a = $2; g += -2 * a * $4 - a * a * $5; gs[$1] = g; lr[$1] = a }
			END {
				prev = 0; at = "-"; to = lvl
				for (i = 2; i <= np; i++) {
					s0 = ps[i - 1]; s1 = ps[i]
					if (s1 <= s0) continue
					if (acc[i] != 1) break
					wg = gs[s1] - gs[s0]
					if (wg > 0 && (prev > 0 || third)) {
						q = 4
						if (prev > 0) { q = wg / prev; q = q < 1 ? 1 : q > 4 ? 4 : q }
						if (q * wg > n0 + gs[s1]) { at = sprintf("%.4g", lr[s1]); to = lr[s1] / 2; break }
					}
					prev = wg
				}
				printf "%s %.4g %s %.4g\n", name, lvl, at, to
			}' "$d/events.csv" <(zcat "$d/steps.csv.gz")
	done
	;;
same)
	shift
	for tn in "$@"; do
		t=${tn%%:*} n0=${tn##*:}
		for r in runs/parity/seeds-$t/runs/salsa-probe*; do
			b=$(basename "$r")
			read -r _ lvl at to < <(THIRD=1 bash "$0" caps "$n0" "$r")
			[ "$at" != - ] && awk -v a="$lvl" -v b="$to" 'BEGIN { exit !((a - b) / a < 0.001 && (b - a) / a < 0.001) }' || continue
			k=runs/normproto3/$t/runs/$b
			[ -d "$k" ] || k=runs/normproto3x/$t/runs/$b
			col=6 kind=acc
			grep -q tinyshakespeare "$r/run.json" && col=7 kind=ppl
			echo "$t $b $(tail -1 "$r/epochs.csv" | cut -d, -f$col) $(tail -1 "$k/epochs.csv" | cut -d, -f$col) $kind"
		done
	done
	;;
run)
	t=$2 lrs=$3
	source scripts/build.sh
	build_salsa
	source scripts/tasks.sh
	task_args "$t"
	./bin/salsa compare "${args[@]}" --methods salsa-probe,shb-hand --grid shb-hand --lr0s "$lrs" \
		--start-lr0s 0.01 --seeds "${SEEDS:-3}" ${JOBS:+--jobs "$JOBS"} --no-plots --out "runs/norm/$t" | tail -1
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d'
	exit 2
	;;
esac
