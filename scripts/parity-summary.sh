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
# With VAL=METHOD it prints instead, for each row of METHOD and the tuned
# shb-hand, read from the runs' epochs.csv (so the runs must be there): the
# median final test metric; the median final validation metric (perplexity
# exp(val_loss), or val_acc), the split the grid is tuned on, with the seeds
# on which the row beats the tuned shb-hand's on the same seed; and the
# median test metric at each run's epoch of least validation loss (early
# stopping), against the tuned row's final test metric; and the median of
# the final test loss less the final validation loss.
# With FULL=METHOD it prints instead, for each row of METHOD and for shb-hand
# at every rate of its grid, the median test and validation metrics of the
# runs' final models on the whole splits, whatever --test-limit the runs had
# (salsa eval --test-limit 0, kept in each run's eval-full.txt; needs
# bin/salsa), and the median test accuracy (of next tokens, for a text). The
# gaps and the seeds better on validation are against shb-hand at the rate
# the whole validation split picks, which may not be the one the runs' own
# validation split picked.
# With SHIFT=1 it prints instead, over every run in each DIR/runs/ (every
# method and every lr of the grid), the correlation r of the final training
# loss with the final test loss less the final validation loss, and with the
# final validation loss. The tables by run leave out a run that failed
# (failed.txt).
# With EPOCHS=1 it prints instead, for a DIR whose runs have no summary.json
# (run elsewhere, their checkpoints not kept), each row's median final test
# and validation metrics read from its runs' epochs.csv, with the gaps to
# the shb-hand row of the best median validation metric; runs with fewer
# epochs than the longest are left out and counted.
# With SCOREBOARD=1 the arguments are NAME=DIR[,PEERDIR] (PEERDIR: DIR-peers
# when it exists), and it prints one line per task, docs/parity/README.md's
# "Where it stands": salsa-probe's gap from each lr0 and Schedule-Free
# AdamW's (from PEERDIR) to the tuned shb-hand of DIR, with the acceptance's
# verdict (within 0.2 points of accuracy, or 2% of perplexity, or better),
# read from the runs' epochs.csv as EPOCHS=1 reads them.
# Usage: [PAIRED=1 | TRIPLES=1 | LEVEL=METHOD | VAL=METHOD | FULL=METHOD | SHIFT=1 | EPOCHS=1] bash scripts/parity-summary.sh DIR...   (needs jq)
#        SCOREBOARD=1 bash scripts/parity-summary.sh NAME=DIR[,PEERDIR]...
set -euo pipefail
# jq definitions the tables share: med, the median (null for none, or where a
# middle value is null); tuned, the tuned shb-hand row; byseed, a row's final
# metric keyed by seed; r(i; j), the correlation of items i and j over an
# array of arrays.
defs='
  def med: sort | if length == 0 then null elif length % 2 == 1 then .[(length-1)/2] else .[length/2-1] as $a | .[length/2] as $b | if $a == null or $b == null then null else ($a + $b) / 2 end end;
  def tuned: .tuned == true and .method == "shb-hand";
  def byseed: [.seeds[] | {key: (.seed|tostring), value: .final}] | from_entries;
  def r(i; j): length as $n | (map(.[i]) | add / $n) as $mx | (map(.[j]) | add / $n) as $my |
    (map((.[i] - $mx) * (.[j] - $my)) | add) / ((map((.[i] - $mx) * (.[i] - $mx)) | add) * (map((.[j] - $my) * (.[j] - $my)) | add) | sqrt);'
# and those of the tables by run (VAL, FULL, EPOCHS), given $hi and $d, the
# directory: m, a median of a field; g, a gap to r (points of accuracy, or %
# of perplexity; positive is better); v, a metric to print; better; records,
# the lines "row seed test val ..." read as objects, extra adding the fields
# after val from the split line; byrow, records keyed by row; picked($pre),
# of those, the row named $pre… of the best median validation metric (the
# smallest lr of a tie, as salsa compare picks it); cells, the
# first cells of row $k (its records the input) against row $ref of $rows:
# the directory, the row and $mark, the runs, the test and validation
# medians with their gaps, and the seeds better on validation.
rundefs='
  def m(f): map(f) | med;
  def g(r): if r == null then "" elif $hi then " (\((. - r) * 10000 | round / 100) pp)" else " (\((r - .) / r * 10000 | round / 100)%)" end;
  def v: if $hi then . * 10000 | round / 100 else . * 1000 | round / 1000 end;
  def better(a; b): if $hi then a > b else a < b end;
  def records(extra): [split("\n")[] | select(. != "") | split(" ") | {row: .[0], seed: .[1], test: (.[2] | tonumber), val: (.[3] | tonumber)} + extra];
  def byrow: group_by(.row) | map({key: .[0].row, value: .}) | from_entries;
  def picked($pre): [to_entries[] | select(.key | startswith($pre)) | {key, lr: (.key | ltrimstr($pre) | tonumber), v: (.value | m(.val))}] |
    (map(.v) | if $hi then max else min end) as $b | map(select(.v == $b)) | sort_by(.lr) | first | .key;
  def cells($rows; $ref; $k; $mark):
    ($rows[$ref] // []) as $t | ($t | m(.test)) as $rt | ($t | m(.val)) as $rv |
    ($t | map({key: .seed, value: .val}) | from_entries) as $tv |
    "| \($d) | \($k | gsub("_"; " "))\($mark) | \(length) | \(m(.test) | v)\(if $k == $ref then "" else m(.test) | g($rt) end) | \(m(.val) | v)\(if $k == $ref then "" else m(.val) | g($rv) end) | \(if $k == $ref then "—" else "\([.[] | select($tv[.seed] != null and better(.val; $tv[.seed]))] | length) of \([.[] | select($tv[.seed] != null)] | length)" end) |";'
# epoch_records FILE...: for each run's epochs.csv whose run did not fail,
# "row seed test val epochs higher-is-better", from its final row.
epoch_records() {
	local f r b
	for f in "$@"; do
		[ -f "$f" ] || continue
		r=${f%/epochs.csv} b=${r##*/}
		[ -f "$r/failed.txt" ] && continue
		awk -F, -v row="${b%-s*}" -v seed="${b##*-s}" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			{ n = NR - 1; p = $c["test_ppl"] != ""; t = p ? $c["test_ppl"] : $c["test_acc"]; v = p ? exp($c["val_loss"]) : $c["val_acc"] }
			END { if (n > 0) print row, seed, t, v, n, (p ? "false" : "true") }' "$f"
	done
}

if [ -n "${SCOREBOARD:-}" ]; then
	echo "| task | tuned shb-hand (median) | salsa-probe from lr0 1e-3 / 1e-2 / 1e-1 | within the bar? | Schedule-Free AdamW | within the bar? |"
	echo "|---|---|---|---|---|---|"
	for arg in "$@"; do
		name=${arg%%=*} dirs=${arg#*=}
		dir=${dirs%%,*} peer=
		[[ $dirs == *,* ]] && peer=${dirs#*,}
		[ -z "$peer" ] && [ -d "$dir-peers" ] && peer=$dir-peers
		x=$(epoch_records "$dir"/runs/salsa-probe-lr0*/epochs.csv "$dir"/runs/shb-hand-lr*/epochs.csv ${peer:+"$peer"/runs/schedule-free-adamw-*/epochs.csv})
		[ -n "$x" ] || { echo "$name: no runs with an epochs.csv in $dir" >&2; continue; }
		full=$(awk '$5 > m { m = $5 } END { print m }' <<<"$x")
		left=$(awk -v m="$full" '$5 < m' <<<"$x" | wc -l)
		[ "$left" = 0 ] || echo "$name: $left runs left out: fewer than $full epochs" >&2
		jq -R -s -r --argjson hi "$(awk 'NR == 1 { print $6 }' <<<"$x")" --arg d "$name" --argjson full "$full" "$defs$rundefs"'
		  # a gap to the tuned median $t (points, or % of perplexity; positive
		  # is better), printed with two decimals and the docs minus sign
		  def gap($t): if $hi then (. - $t) * 100 else ($t - .) / $t * 100 end;
		  def ok: if $hi then . >= -0.2 else . >= -2 end;
		  # . with $k decimals, trailing zeros kept
		  def dec($k): pow(10; $k) as $p | (. * $p | round) as $i | "\($i / $p | floor).\($i % $p | tostring | ("0" * ($k - length)) + .)";
		  def fmt: "\(if (. * 100 | round) < 0 then "−" else "+" end)\(fabs | dec(2))\(if $hi then " pp" else "%" end)";
		  def cell($t; $nt): if . == null then "—" else (m(.test) | gap($t)) as $g |
		    "\(if $g | ok then $g | fmt else "**\($g | fmt)**" end)\(if length != $nt then " (\(length) seeds)" else "" end)" end;
		  def okcell($t): . != null and (m(.test) | gap($t) | ok);
		  records({n: (.[4] | tonumber)}) | map(select(.n == $full)) | byrow as $rows |
		  ($rows | picked("shb-hand-lr")) as $ref |
		  if $ref == null then "\($d): no finished shb-hand run: no row\n" | halt_error(0) else
		  ($rows[$ref] | m(.test)) as $t | ($rows[$ref] | length) as $nt |
		  [$rows["salsa-probe-lr0.001"], $rows["salsa-probe-lr0.01"], $rows["salsa-probe-lr0.1"]] as $probe |
		  $rows["schedule-free-adamw-lr0.0025"] as $sf |
		  "| \($d) | \(if $hi then ($t * 100 | dec(2)) + "%" else $t | dec(3) end) at lr \($ref | ltrimstr("shb-hand-lr")) (\($nt) seeds) | \($probe | map(cell($t; $nt)) | join(" / ")) | \(if all($probe[]; okcell($t)) then "yes" else "**no**" end) | \(if $sf == null then "(not run) | " else "\($sf | cell($t; $nt)) | \(if $sf | okcell($t) then "yes" else "**no**" end)" end) |" end' <<<"$x"
	done
	exit 0
fi

# the header of a table that spans the directories; its rule from its columns
h=
[ -n "${VAL:-}" ] && h="| directory | row | runs | final test metric, median (gap to tuned) | final validation metric (gap to tuned's) | seeds better than tuned on validation | test metric at the epoch of least validation loss (gap to tuned's final) | that epoch, seeds in order | final test loss − validation loss, median |"
[ -n "${FULL:-}" ] && h="| directory | row | runs | whole test split, median (gap to the picked shb-hand) | whole validation split (gap) | seeds better than the picked shb-hand on validation | test accuracy |"
[ -n "${SHIFT:-}" ] && h="| directory | runs | r: final training loss, test loss − validation loss | r: final training loss, validation loss |"
[ -n "${EPOCHS:-}" ] && h="| directory | row | runs | final test metric, median (gap to tuned) | final validation metric (gap to tuned's) | seeds better than tuned on validation |"
[ -n "${LEVEL:-}" ] && h="| directory | runs of $LEVEL | r: ln(final lr), final | median, lower half of final lr | median, upper half | tuned shb-hand |"
if [ -n "$h" ]; then
	echo "$h"
	sed -E 's/[^|]+/---/g' <<<"$h"
fi
for dir in "$@"; do
	s=$dir/summary.json
	if [ -n "${EPOCHS:-}" ]; then
		x=$(epoch_records "$dir"/runs/*/epochs.csv)
		[ -n "$x" ] || { echo "$dir: no runs with an epochs.csv" >&2; continue; }
		# only the runs with as many epochs as the longest: a run stopped
		# early is not finished
		full=$(awk '$5 > m { m = $5 } END { print m }' <<<"$x")
		jq -R -s -r --argjson hi "$(awk 'NR == 1 { print $6 }' <<<"$x")" --arg d "$(basename "$dir")" --argjson full "$full" "$defs$rundefs"'
		  records({n: (.[4] | tonumber)}) | map(select(.n == $full)) | byrow as $rows |
		  ($rows | picked("shb-hand-lr")) as $ref |
		  $rows | to_entries[] | .key as $k | .value | cells($rows; $ref; $k; if $k == $ref then " (tuned)" else "" end)' <<<"$x"
		left=$(awk -v m="$full" '$5 < m' <<<"$x" | wc -l)
		[ "$left" = 0 ] || echo "| $(basename "$dir") | $left runs left out: fewer than $full epochs | | | | |"
		continue
	fi
	[ -f "$s" ] || { echo "$dir: no summary.json" >&2; continue; }
	if [ -n "${FULL:-}" ]; then
		# each run of METHOD's rows and of shb-hand at every rate of its grid:
		# "row seed test metric, validation metric, test accuracy" on the whole
		# splits, from salsa eval --test-limit 0, whose line is kept in the
		# run's eval-full.txt
		[ -x bin/salsa ] || { echo "FULL needs bin/salsa (scripts/parity.sh builds it)" >&2; exit 1; }
		runs=$(jq -r --arg m "$FULL" "$defs"'
		  (.rows[] | select(.method == $m and (tuned | not)) | .name as $n | .seeds[] | "\($n | gsub(" "; "_")) \(.seed) \(.dir)"),
		  (.rows[] | select(tuned) | .seeds as $s | .tuning[].lr0 as $lr | $s[] | "shb-hand_lr=\($lr) \(.seed) runs/shb-hand-lr\($lr)-s\(.seed)")' "$s")
		x=$(while read -r name seed r; do
			e=$dir/$r/eval-full.txt
			[ -f "$dir/$r/failed.txt" ] && continue # a run that failed (its last checkpoint may hold a diverged model)
			if [ ! -s "$e" ]; then
				./bin/salsa eval --run "$dir/$r" --test-limit 0 >"$e"
			fi
			tr ' ' '\n' <"$e" | awk -F= -v pre="$name $seed" '{ v[$1] = $2 }
				END { t = "test_ppl" in v ? v["test_ppl"] : v["test_acc"]; w = "val_ppl" in v ? v["val_ppl"] : v["val_acc"]
					if (t == "" || w == "") { print "no test or validation metric in " FILENAME > "/dev/stderr"; exit 1 }
					print pre, t, w, v["test_acc"] }'
		done <<<"$runs")
		jq -R -s -r --argjson hi "$(jq .higher_is_better "$s")" --arg d "$(basename "$dir")" --arg own "shb-hand_lr=$(jq -r "$defs"'[.rows[] | select(tuned) | .lr0][0] // ""' "$s")" "$defs$rundefs"'
		  records({acc: (.[4] | tonumber)}) | byrow as $rows |
		  # the grid picked on the whole validation split
		  ($rows | picked("shb-hand_lr=")) as $ref |
		  $rows | to_entries[] | .key as $k | .value |
		  ([if $k == $ref then "picked on the whole validation split" else empty end, if $k == $own then "picked on the runs\u0027 own validation split" else empty end] | if length > 0 then " (\(join("; ")))" else "" end) as $mark |
		  "\(cells($rows; $ref; $k; $mark)) \(m(.acc) * 10000 | round / 100)% |"' <<<"$x"
		continue
	fi
	if [ -n "${SHIFT:-}" ]; then
		for f in "$dir"/runs/*/epochs.csv; do
			[ -f "$f" ] && [ ! -f "${f%/epochs.csv}/failed.txt" ] || continue
			awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
				{ tr = $c["train_loss"]; sh = $c["test_loss"] - $c["val_loss"]; v = $c["val_loss"]; ok = $c["val_loss"] != "" && $c["test_loss"] != "" }
				END { if (ok && tr == tr + 0) print tr, sh, v }' "$f"
		done | jq -R -s -r --arg d "$(basename "$dir")" "$defs"'
		  [split("\n")[] | select(. != "") | split(" ") | map(tonumber)] as $x |
		  if ($x | length) < 4 then "| \($d) | \($x | length) | — (fewer than 4 runs with a validation loss) | — |"
		  else "| \($d) | \($x | length) | \($x | r(0; 1) * 100 | round / 100) | \($x | r(0; 2) * 100 | round / 100) |" end'
		continue
	fi
	if [ -n "${LEVEL:-}" ]; then
		jq -r --arg m "$LEVEL" "$defs"'
		  .higher_is_better as $hi |
		  def f: if $hi then "\(. * 10000 | round / 100)%" else "\(. * 100 | round / 100)" end;
		  ([.rows[] | select(tuned) | [.seeds[].final] | med][0]) as $ref |
		  [.rows[] | select(.method == $m and (tuned | not)) | .seeds[] | select(.final != null and .final_lr > 0) | [(.final_lr | log), .final]] |
		  sort_by(.[0]) | length as $n |
		  if $n < 4 then "| \(input_filename | split("/") | .[-2]) | \($n) | — (fewer than 4 runs) | — | — | \(if $ref == null then "—" else ($ref | f) end) |" else
		  "| \(input_filename | split("/") | .[-2]) | \($n) | \(r(0; 1) * 100 | round / 100) | \(.[:($n / 2 | floor)] | map(.[1]) | med | f) | \(.[($n / 2 | ceil):] | map(.[1]) | med | f) | \(if $ref == null then "—" else ($ref | f) end) |" end' "$s"
		continue
	fi
	if [ -n "${VAL:-}" ]; then
		# each run of METHOD's rows and of the tuned shb-hand: "row seed final
		# test, final validation, test at the epoch of least validation loss,
		# that epoch", from its epochs.csv
		metric=$(jq -r .metric "$s")
		runs=$(jq -r --arg m "$VAL" "$defs"'.rows[] | select(.method == $m or tuned) | .name as $n | .seeds[] | "\($n | gsub(" "; "_")) \(.seed) \(.dir)"' "$s")
		missing=$(while read -r _ _ r; do [ -f "$dir/$r/epochs.csv" ] || echo "$r"; done <<<"$runs")
		if [ -n "$missing" ]; then
			echo "$dir: $(wc -l <<<"$missing") runs have no epochs.csv here (the runs were not kept): left out" >&2
			continue
		fi
		x=$(while read -r name seed r; do
			[ -f "$dir/$r/failed.txt" ] && continue
			awk -F, -v m="$metric" -v pre="$name $seed" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
				$c["val_loss"] != "" && (e == "" || $c["val_loss"] < best) { best = $c["val_loss"]; at = $c[m]; e = $1 }
				{ last = $c[m]; v = m == "test_ppl" ? exp($c["val_loss"]) : $c["val_acc"]; sh = $c["test_loss"] - $c["val_loss"] }
				END { if (e == "") { print FILENAME ": no validation loss in any epoch" > "/dev/stderr"; exit 1 } print pre, last, v, at, e, sh }' "$dir/$r/epochs.csv"
		done <<<"$runs")
		jq -R -s -r --argjson hi "$(jq .higher_is_better "$s")" --arg d "$(basename "$dir")" --arg ref "$(jq -r "$defs"'[.rows[] | select(tuned) | .name][0] // ""' "$s")" "$defs$rundefs"'
		  records({at: (.[4] | tonumber), e: .[5], sh: (.[6] | tonumber)}) | byrow as $rows |
		  ($rows[$ref] // [] | m(.test)) as $rt |
		  $rows | to_entries[] | .key as $k | .value |
		  "\(cells($rows; $ref; $k; if $k == $ref then " (tuned)" else "" end)) \(m(.at) | v)\(m(.at) | g($rt)) | \(sort_by(.seed | tonumber) | map(.e) | join(" ")) | \(m(.sh) * 1000 | round / 1000) |"' <<<"$x"
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
