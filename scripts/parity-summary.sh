#!/usr/bin/env bash
# Tables of issue 9's measurements (scripts/parity.sh) for docs/parity: for
# each compare directory, each row's median final test metric over the seeds
# [min, max], its gap to the tuned shb-hand row (percentage points of
# accuracy, or % of perplexity; negative: worse), the median final lr, drops
# and switch step, and the median seconds per step relative to shb-hand's
# (— where the directory has no tuned shb-hand row). With PAIRED=1 a last
# column counts the seeds on which the row ends better than the tuned
# shb-hand of the same seed (the same data order), of the seeds both have.
# The median of an even number of seeds is the mean of the middle two, as in
# the compare report.
# Usage: [PAIRED=1] bash scripts/parity-summary.sh DIR...   (needs jq)
set -euo pipefail
for dir in "$@"; do
	s=$dir/summary.json
	[ -f "$s" ] || { echo "$dir: no summary.json" >&2; continue; }
	echo
	echo "**$(basename "$dir")** ($(jq -r .task "$s"))"
	echo
	if [ -n "${PAIRED:-}" ]; then
		echo "| row | lr0 | final [min, max] | gap to tuned | final lr | drops | switch step | time/step vs tuned | seeds better than tuned |"
		echo "|---|---|---|---|---|---|---|---|---|"
	else
		echo "| row | lr0 | final [min, max] | gap to tuned | final lr | drops | switch step | time/step vs tuned |"
		echo "|---|---|---|---|---|---|---|---|"
	fi
	jq -r --arg paired "${PAIRED:-}" '
	  def med: sort | if length == 0 then null elif length % 2 == 1 then .[(length-1)/2] else .[length/2-1] as $a | .[length/2] as $b | if $a == null or $b == null then null else ($a + $b) / 2 end end;
	  .higher_is_better as $hi |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | [.seeds[].final] | med][0]) as $ref |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | [.seeds[].seconds_per_step] | med][0]) as $refsec |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | .seeds[] | {key: (.seed|tostring), value: .final}] | from_entries) as $refby |
	  .rows[] |
	  ([.seeds[].final] | med) as $m |
	  ([.seeds[].final] | min) as $lo | ([.seeds[].final] | max) as $up |
	  (if $hi then "\($m*100*100|round/100) [\($lo*100*100|round/100), \($up*100*100|round/100)]"
	   else "\($m*100|round/100) [\($lo*100|round/100), \($up*100|round/100)]" end) as $cell |
	  (if .tuned == true and .method == "shb-hand" then "(reference, lr \(.lr0))"
	   elif $ref == null then "— (no tuned shb-hand row)"
	   elif $hi then "\((($m-$ref)*100*100|round)/100) pp"
	   else "\(((($ref-$m)/$ref)*100*100|round)/100) %" end) as $gap |
	  "| \(.name)\(if .tuned == true then " (tuned)" else "" end) | \(.lr0) | \($cell) | \($gap) | \([.seeds[].final_lr] | med | .*10000|round/10000) | \([.seeds[].drops] | med) | \([.seeds[].switch_step] | med // "—") | \(if $refsec == null then "—" else "\((([.seeds[].seconds_per_step] | med) / $refsec * 100 | round) / 100)×" end) |\(if $paired == "" then "" elif .tuned == true and .method == "shb-hand" then " — |" else ([.seeds[] | select($refby[.seed|tostring] != null) | (if $hi then .final > $refby[.seed|tostring] else .final < $refby[.seed|tostring] end)]) as $w | " \([$w[] | select(.)] | length) of \($w | length) |" end)"' "$s"
done
