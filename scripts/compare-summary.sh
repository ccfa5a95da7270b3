#!/usr/bin/env bash
# One table over compare directories (tasks): a row per method, a column per
# task, each cell the median final test metric over the seeds (accuracy in %,
# perplexity as is), with the task's best cell in bold and — where the method
# did not run. Usage: bash scripts/compare-summary.sh DIR...   (needs jq)
set -euo pipefail
jq -n -r '
  def med: sort | .[(length-1)/2|floor];
  [inputs] as $tasks |
  ($tasks | map(.task)) as $names |
  ([$tasks[].rows[].name] | reduce .[] as $n ([]; if index([$n]) then . else . + [$n] end)) as $rows |
  ($tasks | map(. as $t | [.rows[] | [.seeds[].final] | med] | if $t.higher_is_better then max else min end)) as $best |
  "| method | " + ($names | join(" | ")) + " |",
  "|---|" + ($names | map("---|") | join("")),
  ($rows[] as $r |
    "| \($r) | " + ([range($tasks|length) as $i |
      ($tasks[$i]) as $t |
      ([$t.rows[] | select(.name == $r)][0]) as $row |
      if $row == null then "—" else
        ([$row.seeds[].final] | med) as $m |
        (if $t.higher_is_better then ($m*10000|round/100|tostring) else ($m*100|round/100|tostring) end) as $s |
        (if $row.tuned == true then $s + " (lr \($row.lr0))" else $s end) as $s2 |
        if $m == $best[$i] then "**" + $s2 + "**" else $s2 end
      end] | join(" | ")) + " |")
' $(for d in "$@"; do echo "$d/summary.json"; done)
