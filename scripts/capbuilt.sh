#!/usr/bin/env bash
# docs/parity/keep-cap.md: salsa-probe as built over ten seeds from every lr0 alone (runs/parity/capbuilt-TASK,
# DIR=… for another directory), against the scoreboard's tuned median (tasks.sh scoreboard_ref): per lr0 the
# median's gap (a failed run counts as accuracy 0; positive is better), and the runs that end at x̄, that
# failed, and whose probe the cap ended.
#
#   [DIR=runs/parity/decayguard-h17] bash scripts/capbuilt.sh TASK...
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/tasks.sh # scoreboard_ref
for t in "$@"; do
	d=${DIR:-runs/parity/capbuilt-$t}
	ref=$(scoreboard_ref "$t")
	[ -n "$ref" ] || { echo "capbuilt: $t: no row on the scoreboard" >&2; continue; }
	for lr in 0.001 0.01 0.1; do
		for s in $(seq 10); do
			r=$d/runs/salsa-probe-lr$lr-s$s
			[ -f "$r/run.json" ] || continue
			acc=fail
			[ -f "$r/failed.txt" ] || acc=$(tail -1 "$r/epochs.csv" | cut -d, -f6)
			xbar=$(awk -F, '$2 == "average" && $7 == 1 { n++ } END { print n + 0 }' "$r/events.csv")
			capped=$(awk -F, '$2 == "decay" { print ($NF == "norm cap"); exit }' "$r/events.csv")
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$ref" "$lr" "$acc" "$xbar" "${capped:-0}"
		done
	done
done | awk -F'\t' '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function flush(   m) { if (key == "") return; m = med(v, n)
	printf "| %s | %s | %.2f%% | %+.2f pp | %d | %d of %d | %d | %d |\n", task, lr, ref * 100, (m - ref) * 100, x, f, n, c, n; n = x = f = c = 0 }
BEGIN { print "| task | lr0 | tuned shb-hand | salsa-probe (gap) | runs at x̄ | failed | capped | runs |"; print "|---|---|---|---|---|---|---|---|" }
$1 "/" $3 != key { flush(); key = $1 "/" $3; task = $1; lr = $3; ref = $2 }
{ v[++n] = ($4 == "fail") ? 0 : $4 + 0; f += ($4 == "fail"); x += $5; c += $6 }
END { flush() }'
