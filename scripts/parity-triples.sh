#!/usr/bin/env bash
# How much issue 9's verdict on a task depends on which three seeds are run:
# for a compare directory with more seeds than three (scripts/parity.sh
# seeds-*), each row's gap to the tuned shb-hand is computed on every set of
# three seeds the two rows share, both medians taken over the same three
# seeds (the same data orders), and the share of those sets that meet the
# acceptance's bar is printed: within 0.2 percentage points of accuracy, or
# within 2% of perplexity, or better. The tuned lr is the one picked over all
# the directory's seeds.
# Usage: bash scripts/parity-triples.sh DIR...   (needs jq)
set -euo pipefail
for dir in "$@"; do
	s=$dir/summary.json
	[ -f "$s" ] || { echo "$dir: no summary.json" >&2; continue; }
	echo
	echo "**$(basename "$dir")** ($(jq -r .task "$s")): the gap over every three seeds of the tuned shb-hand's"
	echo
	echo "| row | seed sets | within the bar | gap: lowest, median, highest |"
	echo "|---|---|---|---|"
	jq -r '
	  def med3: sort | .[1];
	  def med: sort | if length % 2 == 1 then .[(length-1)/2] else (.[length/2-1] + .[length/2]) / 2 end;
	  .higher_is_better as $hi |
	  ([.rows[] | select(.tuned == true and .method == "shb-hand") | .seeds[] | {key: (.seed|tostring), value: .final}] | from_entries) as $ref |
	  .rows[] | select((.tuned == true and .method == "shb-hand") | not) |
	  (.seeds | map({key: (.seed|tostring), value: .final}) | from_entries) as $row |
	  ([$row | keys[] | select($ref[.] != null)] | sort_by(tonumber)) as $ks |
	  ($ks | length) as $n |
	  [range(0; $n) as $i | range($i+1; $n) as $j | range($j+1; $n) as $l | [$ks[$i], $ks[$j], $ks[$l]] |
	    ([.[] | $row[.]] | med3) as $m | ([.[] | $ref[.]] | med3) as $r |
	    if $hi then ($m - $r) * 100 else ($r - $m) / $r * 100 end] as $gaps |
	  ($gaps | map(select(. >= (if $hi then -0.2 else -2 end))) | length) as $ok |
	  select($n >= 3) |
	  "| \(.name) | \($gaps | length) | \($ok) (\($ok * 100 / ($gaps | length) | round)%) | \($gaps | min * 100 | round / 100), \($gaps | med * 100 | round / 100), \($gaps | max * 100 | round / 100) \(if $hi then "pp" else "%" end) |"' "$s"
done
