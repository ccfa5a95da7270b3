#!/usr/bin/env bash
# docs/parity/keep-cap.md: salsa-probe over ten seeds from every lr0 alone, as built (runs/parity/capbuilt-TASK)
# or with a key (NAME=keepall: runs/parity/keepall-TASK, salsa-probe --set probe_keep_rate=1; DIR=… for any
# other directory), against the scoreboard's tuned median (tasks.sh scoreboard_ref): per lr0 the scoreboard's
# salsa-probe cell (tasks.sh scoreboard_cell), the median's gap (positive is better, bold outside the bar of
# 0.2 points or 2% of perplexity; a failed run counts as accuracy 0 or perplexity +inf), and the runs that end
# at x̄, that failed, and whose probe the cap ended. With BUILT=1, salsa-probe as built beside the key's arm:
# its runs in DIR-probe (runs/chain38.sh trained those the cap did not end), the key's where the cap ended them.
#
#   [NAME=keepall [BUILT=1] | DIR=runs/parity/decayguard-h17] bash scripts/capbuilt.sh TASK...
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/tasks.sh # scoreboard_ref, scoreboard_cell
for t in "$@"; do
	d=${DIR:-runs/parity/${NAME:-capbuilt}-$t}
	ref=$(scoreboard_ref "$t")
	[ -n "$ref" ] || { echo "capbuilt: $t: no row on the scoreboard" >&2; continue; }
	for lr in 0.001 0.01 0.1; do
		cell=$(scoreboard_cell "$t" $lr)
		for s in $(seq 10); do
			r=$d/runs/salsa-probe-lr$lr-s$s
			[ -f "$r/run.json" ] || continue
			# BUILT=1: salsa-probe as built where DIR-probe has the run (trained where the cap did not end the key's),
			# else the key's run, which the cap ended, and which is then the same in both arms
			[ -n "${BUILT:-}" ] && [ -f "$d-probe/runs/salsa-probe-lr$lr-s$s/run.json" ] && r=$d-probe/runs/salsa-probe-lr$lr-s$s
			col=6
			grep -q tinyshakespeare "$r/run.json" && col=7
			v=fail
			if [ ! -f "$r/failed.txt" ]; then
				# a run still training is left out: its last epoch is not the budget's
				[ "$(tail -1 "$r/epochs.csv" 2>/dev/null | cut -d, -f1)" = "$(grep -o '"epochs": *[0-9]*' "$r/run.json" | grep -o '[0-9]*$')" ] || continue
				v=$(tail -1 "$r/epochs.csv" | cut -d, -f$col)
			fi
			xbar=$(awk -F, '$2 == "average" && $7 == 1 { n++ } END { print n + 0 }' "$r/events.csv")
			capped=$(awk -F, '$2 == "decay" { print ($NF == "norm cap"); exit }' "$r/events.csv")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$ref" "$lr" "$v" "$xbar" "${capped:-0}" "$((col == 7))" "$cell"
		done
	done
done | awk -F'\t' '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function flush(   m, g) { if (key == "") return; m = med(v, n)
	g = lstm ? (ref - m) / ref * 100 : (m - ref) * 100
	printf "| %s | %s | %s | %s | %s (%+.2f%s)%s | %d | %d of %d | %d | %d |\n", task, lr, lstm ? sprintf("%.5g", ref) : sprintf("%.2f%%", ref * 100), cell,
		lstm ? sprintf("%.4g", m) : sprintf("%.2f%%", m * 100), g, lstm ? "%" : " pp", (lstm ? g >= -2 : g >= -0.2) ? "" : " **miss**", x, f, n, c, n; n = x = f = c = 0 }
BEGIN { print "| task | lr0 | tuned shb-hand | scoreboard cell | this arm (gap) | runs at x̄ | failed | capped | runs |"; print "|---|---|---|---|---|---|---|---|---|" }
$1 "/" $3 != key { flush(); key = $1 "/" $3; task = $1; lr = $3; ref = $2; lstm = $7; cell = $8 }
{ v[++n] = ($4 == "fail") ? (lstm ? 1e300 : 0) : $4 + 0; f += ($4 == "fail"); x += $5; c += $6 }
END { flush() }'
