#!/usr/bin/env bash
# Tables of issue 9's measurements (scripts/parity.sh) for docs/parity: for
# each compare directory, each row's median final test metric over the seeds
# [min, max], its gap to the tuned shb-hand row (percentage points of
# accuracy, or % of perplexity; negative: worse), the median final lr, drops
# and switch step, and the median seconds per step relative to shb-hand's
# (— where the directory has no tuned shb-hand row).
# Usage: bash scripts/parity-summary.sh DIR...   (needs jq)
set -euo pipefail
for dir in "$@"; do
	s=$dir/summary.json
	[ -f "$s" ] || { echo "$dir: no summary.json" >&2; continue; }
	echo
	echo "**$(basename "$dir")** ($(jq -r .task "$s"))"
	echo
	echo "| row | lr0 | final [min, max] | gap to tuned | final lr | drops | switch step | time/step vs tuned |"
	echo "|---|---|---|---|---|---|---|---|"
	jq -r '
	  def med: sort | if length == 0 then null else .[(length-1)/2|floor] end;
	  .higher_is_better as $hi |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | [.seeds[].final] | med][0]) as $ref |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | [.seeds[].seconds_per_step] | med][0]) as $refsec |
	  .rows[] |
	  ([.seeds[].final] | med) as $m |
	  ([.seeds[].final] | min) as $lo | ([.seeds[].final] | max) as $up |
	  (if $hi then "\($m*100*100|round/100) [\($lo*100*100|round/100), \($up*100*100|round/100)]"
	   else "\($m*100|round/100) [\($lo*100|round/100), \($up*100|round/100)]" end) as $cell |
	  (if .tuned == true and .method == "shb-hand" then "(reference, lr \(.lr0))"
	   elif $ref == null then "— (no tuned shb-hand row)"
	   elif $hi then "\((($m-$ref)*100*100|round)/100) pp"
	   else "\(((($ref-$m)/$ref)*100*100|round)/100) %" end) as $gap |
	  "| \(.name)\(if .tuned == true then " (tuned)" else "" end) | \(.lr0) | \($cell) | \($gap) | \([.seeds[].final_lr] | med | .*10000|round/10000) | \([.seeds[].drops] | med) | \([.seeds[].switch_step] | med // "—") | \(if $refsec == null then "—" else "\((([.seeds[].seconds_per_step] | med) / $refsec * 100 | round) / 100)×" end) |"' "$s"
done
