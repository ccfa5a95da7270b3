#!/usr/bin/env bash
# Summarizes the runs of scripts/deep-results.sh as the README's table:
# mean ± sample standard deviation over seeds where there are several.
# Usage: bash scripts/deep-summary.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/deep}
metric() { grep -o 'test_\(acc\|ppl\)=[0-9.]*' "$1" | cut -d= -f2; }
# stat FILES...: "mean ± sd (n)" of the runs' metric, accuracy in percent.
stat() {
	for f in "$@"; do [ -s "$f" ] && metric "$f"; done | awk -v pct="$pct" '
		{ v = pct ? 100*$1 : $1; s += v; ss += v*v; n++ }
		END { if (n == 0) { print "–"; exit }
		      m = s/n; sd = n > 1 ? sqrt((ss - n*m*m)/(n-1)) : 0
		      if (n > 1) printf "%.2f ± %.2f (%d seeds)", m, sd, n; else printf "%.2f", m }'
}
echo "| task | salsa | shb-hand, best lr | shb-hand grid (seed 1) | adam-warmup | salsa-val |"
echo "|---|---|---|---|---|---|"
for task in cnn resnet20 lstm; do
	[ -f "$out/$task-best-lr" ] || continue
	best=$(awk '{print $NF}' "$out/$task-best-lr")
	pct=1; [ $task = lstm ] && pct=0
	grid=$(for f in "$out/$task"-shb-hand-lr*-s1.final; do
		lr=${f#"$out/$task-shb-hand-lr"}; lr=${lr%-s1.final}
		printf '%s: %s, ' "$lr" "$(stat "$f")"
	done)
	printf '| %s | %s | %s (lr %s) | %s | %s | %s |\n' "$task" \
		"$(stat "$out/$task"-salsa-s{1,2,3}.final)" \
		"$(stat "$out/$task-shb-hand-lr$best"-s{1,2,3}.final)" "$best" "${grid%, }" \
		"$(stat "$out/$task-adam-warmup-s1.final")" "$(stat "$out/$task-salsa-val-s1.final")"
done
