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
# With TRIPLES=1 it prints instead how much the verdict depends on which
# three seeds are run: for a directory with more seeds than three
# (scripts/parity.sh seeds-*), each row's gap to the tuned shb-hand on every
# set of three seeds the two rows share, both medians over the same three
# seeds, and the share of those sets that meet the acceptance's bar: within
# 0.2 percentage points of accuracy, or within 2% of perplexity, or better.
# The tuned lr is the one picked over all the directory's seeds.
# With LEVEL=METHOD it prints instead, for each directory, how the final
# metric of METHOD's runs (every lr0 and seed pooled) goes with the final lr,
# which for salsa-budget and salsa-probe is the rate the linear decay began
# from divided by the decay's length: the correlation r of ln(final lr) with
# the final metric, and the median final metric of the runs in the lower and
# the upper half of final lr, beside the tuned shb-hand's median.
# With BESTVAL=METHOD it prints instead, for each row of METHOD, the median
# final metric beside the median at each run's epoch of least validation
# loss (early stopping on the validation split, read from the runs'
# epochs.csv, so the runs must be there), with their gaps to the tuned
# shb-hand.
# Usage: [PAIRED=1 | TRIPLES=1 | LEVEL=METHOD | BESTVAL=METHOD] bash scripts/parity-summary.sh DIR...   (needs jq)
set -euo pipefail
# jq definitions the tables share: med, the median (null for none, or where a
# middle value is null); tuned, the tuned shb-hand row; byseed, a row's final
# metric keyed by seed.
defs='
  def med: sort | if length == 0 then null elif length % 2 == 1 then .[(length-1)/2] else .[length/2-1] as $a | .[length/2] as $b | if $a == null or $b == null then null else ($a + $b) / 2 end end;
  def tuned: .tuned == true and .method == "shb-hand";
  def byseed: [.seeds[] | {key: (.seed|tostring), value: .final}] | from_entries;'
if [ -n "${BESTVAL:-}" ]; then
	echo "| directory | row | runs | final, median (gap to tuned) | at the epoch of least validation loss, median (gap) | that epoch, by seed |"
	echo "|---|---|---|---|---|---|"
fi
if [ -n "${LEVEL:-}" ]; then
	echo "| directory | runs of $LEVEL | r: ln(final lr), final | median, lower half of final lr | median, upper half | tuned shb-hand |"
	echo "|---|---|---|---|---|---|"
fi
for dir in "$@"; do
	s=$dir/summary.json
	[ -f "$s" ] || { echo "$dir: no summary.json" >&2; continue; }
	if [ -n "${LEVEL:-}" ]; then
		jq -r --arg m "$LEVEL" "$defs"'
		  def r: length as $n | (map(.[0]) | add / $n) as $mx | (map(.[1]) | add / $n) as $my |
		    (map((.[0] - $mx) * (.[1] - $my)) | add) / ((map((.[0] - $mx) * (.[0] - $mx)) | add) * (map((.[1] - $my) * (.[1] - $my)) | add) | sqrt);
		  .higher_is_better as $hi |
		  def f: if $hi then "\(. * 10000 | round / 100)%" else "\(. * 100 | round / 100)" end;
		  ([.rows[] | select(tuned) | [.seeds[].final] | med][0]) as $ref |
		  [.rows[] | select(.method == $m and (tuned | not)) | .seeds[] | select(.final != null and .final_lr > 0) | [(.final_lr | log), .final]] |
		  sort_by(.[0]) | length as $n |
		  if $n < 4 then "| \(input_filename | split("/") | .[-2]) | \($n) | — (fewer than 4 runs) | — | — | \(if $ref == null then "—" else ($ref | f) end) |" else
		  "| \(input_filename | split("/") | .[-2]) | \($n) | \(r * 100 | round / 100) | \(.[:($n / 2 | floor)] | map(.[1]) | med | f) | \(.[($n / 2 | ceil):] | map(.[1]) | med | f) | \(if $ref == null then "—" else ($ref | f) end) |" end' "$s"
		continue
	fi
	if [ -n "${BESTVAL:-}" ]; then
		metric=$(jq -r .metric "$s") hi=$(jq -r .higher_is_better "$s")
		ref=$(jq -r "$defs"'[.rows[] | select(tuned) | [.seeds[].final] | med][0] // empty' "$s")
		jq -r --arg m "$BESTVAL" '.rows[] | select(.method == $m and .tuned != true) | "\(.name) \([.seeds[].dir] | join(" "))"' "$s" |
			while read -r name runs; do
				missing=0
				for r in $runs; do [ -f "$dir/$r/epochs.csv" ] || missing=$((missing + 1)); done
				if [ "$missing" -gt 0 ]; then
					echo "$dir: $name: $missing runs have no epochs.csv here (the runs were not kept): left out" >&2
					continue
				fi
				x=$(for r in $runs; do
					f=$dir/$r/epochs.csv
					awk -F, -v m="$metric" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
						$c["val_loss"] != "" && (e == "" || $c["val_loss"] < best) { best = $c["val_loss"]; at = $c[m]; e = $1 }
						{ last = $c[m] }
						END { if (e == "") { print FILENAME ": no validation loss in any epoch" > "/dev/stderr"; exit 1 } print last, at, e }' "$f"
				done)
				jq -R -s -r --arg name "$name" --arg ref "$ref" --argjson hi "$hi" --arg d "$(basename "$dir")" "$defs"'
					[split("\n")[] | select(. != "") | split(" ") | map(tonumber)] as $x |
					def v: . * 1000 | round / 1000;
					def g: if $ref == "" then "" else ($ref | tonumber) as $r |
						if $hi then " (\((. - $r) * 10000 | round / 100) pp)" else " (\(($r - .) / $r * 10000 | round / 100)%)" end end;
					"| \($d) | \($name) | \($x | length) | \($x | map(.[0]) | med | v)\($x | map(.[0]) | med | g) | \($x | map(.[1]) | med | v)\($x | map(.[1]) | med | g) | \($x | map(.[2] | tostring) | join(" ")) |"' <<<"$x"
			done
		continue
	fi
	echo
	if [ -n "${TRIPLES:-}" ]; then
		echo "**$(basename "$dir")** ($(jq -r .task "$s")): the gap over every three seeds of the tuned shb-hand's"
		echo
		echo "| row | seed sets | within the bar | gap: lowest, median, highest |"
		echo "|---|---|---|---|"
		jq -r "$defs"'
		  def med3: sort | .[1];
		  .higher_is_better as $hi |
		  ([.rows[] | select(tuned) | byseed][0] // {}) as $ref |
		  .rows[] | select(tuned | not) |
		  byseed as $row |
		  ([$row | keys[] | select($ref[.] != null)] | sort_by(tonumber)) as $ks |
		  ($ks | length) as $n |
		  [range(0; $n) as $i | range($i+1; $n) as $j | range($j+1; $n) as $l | [$ks[$i], $ks[$j], $ks[$l]] |
		    ([.[] | $row[.]] | med3) as $m | ([.[] | $ref[.]] | med3) as $r |
		    if $hi then ($m - $r) * 100 else ($r - $m) / $r * 100 end] as $gaps |
		  ($gaps | map(select(. >= (if $hi then -0.2 else -2 end))) | length) as $ok |
		  select($n >= 3) |
		  "| \(.name) | \($gaps | length) | \($ok) (\($ok * 100 / ($gaps | length) | round)%) | \($gaps | min * 100 | round / 100), \($gaps | med * 100 | round / 100), \($gaps | max * 100 | round / 100) \(if $hi then "pp" else "%" end) |"' "$s"
		continue
	fi
	echo "**$(basename "$dir")** ($(jq -r .task "$s"))"
	echo
	if [ -n "${PAIRED:-}" ]; then
		echo "| row | lr0 | final [min, max] | gap to tuned | final lr | drops | switch step | time/step vs tuned | seeds better than tuned |"
		echo "|---|---|---|---|---|---|---|---|---|"
	else
		echo "| row | lr0 | final [min, max] | gap to tuned | final lr | drops | switch step | time/step vs tuned |"
		echo "|---|---|---|---|---|---|---|---|"
	fi
	jq -r --arg paired "${PAIRED:-}" "$defs"'
	  .higher_is_better as $hi |
	  ([.rows[] | select(tuned) | [.seeds[].final] | med][0]) as $ref |
	  ([.rows[] | select(tuned) | [.seeds[].seconds_per_step] | med][0]) as $refsec |
	  ([.rows[] | select(tuned) | byseed][0] // {}) as $refby |
	  .rows[] |
	  ([.seeds[].final] | med) as $m |
	  ([.seeds[].final] | min) as $lo | ([.seeds[].final] | max) as $up |
	  (if $hi then "\($m*100*100|round/100) [\($lo*100*100|round/100), \($up*100*100|round/100)]"
	   else "\($m*100|round/100) [\($lo*100|round/100), \($up*100|round/100)]" end) as $cell |
	  (if tuned then "(reference, lr \(.lr0))"
	   elif $ref == null then "— (no tuned shb-hand row)"
	   elif $hi then "\((($m-$ref)*100*100|round)/100) pp"
	   else "\(((($ref-$m)/$ref)*100*100|round)/100) %" end) as $gap |
	  "| \(.name)\(if .tuned == true then " (tuned)" else "" end) | \(.lr0) | \($cell) | \($gap) | \([.seeds[].final_lr] | med | .*10000|round/10000) | \([.seeds[].drops] | med) | \([.seeds[].switch_step] | med // "—") | \(if $refsec == null then "—" else "\((([.seeds[].seconds_per_step] | med) / $refsec * 100 | round) / 100)×" end) |\(if $paired == "" then "" elif tuned then " — |" else ([.seeds[] | select($refby[.seed|tostring] != null) | (if $hi then .final > $refby[.seed|tostring] else .final < $refby[.seed|tostring] end)]) as $w | " \([$w[] | select(.)] | length) of \($w | length) |" end)"' "$s"
done
