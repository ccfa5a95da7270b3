#!/usr/bin/env bash
# Which finished runs a --set key would change, without training them:
#
#   scripts/replay-changed.sh [--method M] --set probe_welch=1 [--set k=v]... RUN_OR_COMPARE_DIR...
#
# For each run directory (a compare directory stands for the salsa-probe runs
# under its runs/), `salsa replay --run DIR` runs the scheduler over the run's
# own logged trace with the run's settings and the keys given, and its events
# are compared with the run's events.csv. A key changes only the scheduler's
# decisions, so while the replay decides as the run did, the run with the key
# is the same run, step for step; at the first decision that differs, the two
# part, and the replay after it means nothing. The 4th column of an event (a
# probe's prev, which probe_welch redefines as the best window's mean) is left
# out of the comparison. Prints "DIR same" or "DIR changed STEP" (the step of
# the first decision that differs), or "DIR unreplayed: REASON" for a run
# salsa replay cannot replay with the keys (a run whose decay began before
# the keys' would: its trace has no line-search rates after it), then a
# count; exits 1 if any run was unreplayed. Checked against training
# (docs/parity/welch.md): of 300 ten-seed runs trained again with
# probe_welch=1, the 222 it called same ended exactly as before and the 78
# it called changed otherwise. It also runs backwards: over runs trained
# with a key, --set KEY=0 names the runs that would go otherwise without it.
# --method M replays under another method than the run's: a key salsa-probe
# fixes (warmup_guard, since it joined salsa-probe) is refused for it, and
# --method salsa-budget runs the same recorded Tail with the key changed.
set -euo pipefail
cd "$(dirname "$0")/.."
sets=()
while [ $# -gt 0 ] && { [ "$1" = --set ] || [ "$1" = --method ]; }; do
	sets+=("$1" "$2")
	shift 2
done
if ! [[ " ${sets[*]} " == *" --set "* ]] || [ $# -eq 0 ]; then
	echo "usage: scripts/replay-changed.sh [--method M] --set key=value [--set key=value]... RUN_OR_COMPARE_DIR..." >&2
	exit 2
fi
source scripts/build.sh
[ -x bin/salsa ] || build_salsa
decisions() { awk -F, 'BEGIN { OFS = "," } { $4 = ""; print }'; }
same=0 changed=0 failed=0
for d in "$@"; do
	if [ -f "$d/events.csv" ]; then
		runs=("$d")
	else
		runs=("$d"/runs/salsa-probe-*)
	fi
	for r in "${runs[@]}"; do
		[ -f "$r/events.csv" ] || continue
		if ! replayed=$(./bin/salsa replay --run "$r" "${sets[@]}" 2>&1); then
			# e.g. a run whose decay began before the key's would (its trace
			# has no line-search rates after it): not decided here
			echo "$r unreplayed: $(tail -n1 <<<"$replayed")"
			failed=$((failed + 1))
			continue
		fi
		first=$(diff <(decisions <"$r/events.csv") <(decisions <<<"$replayed") | grep -m1 '^[<>]' | cut -c3- | cut -d, -f1 || true)
		if [ -z "$first" ]; then
			echo "$r same"
			same=$((same + 1))
		else
			echo "$r changed $first"
			changed=$((changed + 1))
		fi
	done
done
echo "$same same, $changed changed, $failed unreplayed"
[ "$failed" -eq 0 ]
