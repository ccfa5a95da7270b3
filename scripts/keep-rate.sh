#!/usr/bin/env bash
# docs/parity/keep-rate.md: salsa-probe with probe_keep_rate=1 (runs/parity/keep-TASK, parity.sh keep-TASK)
# against salsa-probe's runs from the same lr0 and seeds in the task's current ten-seed directory;
# with PART=backoff, docs/parity/backoff.md's probe_backoff=4 (runs/parity/backoff-TASK) instead, with PART=cuts
# docs/parity/cuts.md's decay_cuts=1 (runs/parity/cuts-TASK), with PART=norm docs/parity/norm.md's band on the
# growth of ‖x‖² (runs/normproto/TASK, a throwaway build), with PART=norm2 its second version (runs/normproto2/TASK),
# with PART=norm3 its third, the cap relative to ‖x‖² (runs/normproto3/TASK; PART=norm3x: from lr0 1e-3 and 1e-1,
# runs/normproto3x/TASK), with PART=norm5 its fifth, the cap only on a measured ratio, from every lr0 (runs/norm5/TASK:
# the third version's runs where the decisions are the same, the build's where they differ), with PART=keepcap
# docs/parity/keep-cap.md's probe_keep_rate=1 beside the cap (runs/parity/keepcap-TASK) against salsa-probe's
# runs with the cap (runs/parity/keepcap-TASK-probe where that arm was trained beside it, else built_dir), the
# tuned median the scoreboard's where its runs are not on this machine; with PART=keepcap2 the same with the build that
# has the decay's guard (runs/parity/keepcap2-TASK, against keepcap2-TASK-probe, decayguard-h17 or built_dir).
#
#   [PART=backoff|cuts|norm|norm2|norm3|norm3x|norm5|keepcap|keepcap2] bash scripts/keep-rate.sh TASK...
#       per task and lr0: the tuned shb-hand's median over seeds 1–10, salsa-probe's median without and
#       with probe_keep_rate (gap; positive better, bold outside the bar), the runs that failed or end
#       at chance, and the seeds on which the change ends better
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/tasks.sh # current_dir, tuned_lr
# final DIR COL: the last epoch's column COL of DIR/epochs.csv, "fail" if the run failed
final() {
	if [ -f "$1/failed.txt" ] || [ ! -f "$1/epochs.csv" ]; then echo fail; else tail -1 "$1/epochs.csv" | cut -d, -f"$2"; fi
}
part=${PART:-keep}
key=$(case $part in keep | keepcap | keepcap2) echo probe_keep_rate ;; backoff) echo probe_backoff=4 ;; cuts) echo decay_cuts=1 ;; norm) echo "the norm band" ;; norm2) echo "the band, second version" ;; norm3 | norm3x) echo "the relative cap" ;; norm5) echo "probe_norm_cap=1" ;; *) echo "PART=$part: must be keep, keepcap, keepcap2, backoff, cuts, norm, norm2, norm3, norm3x or norm5" >&2; exit 2 ;; esac) || exit 2
echo "| task | lr0 | tuned shb-hand | salsa-probe (gap) | with $key (gap) | failed or at chance | seeds better |"
echo "|---|---|---|---|---|---|---|"
for t in "$@"; do
	d=$(current_dir "$t")
	case $part in
	norm) k=runs/normproto/$t ;;
	norm2) k=runs/normproto2/$t ;;
	norm3) k=runs/normproto3/$t ;;
	norm3x) k=runs/normproto3x/$t ;;
	norm5) k=runs/norm5/$t ;;
	*) k=runs/parity/$part-$t ;;
	esac
	[ -d "$k/runs" ] || continue
	if [ "$part" = keepcap ] || [ "$part" = keepcap2 ]; then
		d=runs/parity/$part-$t-probe
		[ "$part-$t" = keepcap2-h17 ] && d=runs/parity/decayguard-h17 # salsa-probe with the guard
		[ -d "$d/runs" ] || d=$(built_dir "$t")
	fi
	tl=$(tuned_lr "$d")
	col=6 lstm=0
	grep -q tinyshakespeare "$k/runs/$(ls "$k/runs" | head -1)/run.json" && col=7 lstm=1
	if [ -n "$tl" ]; then
		ref=$(for s in $(seq 10); do final "$d/runs/shb-hand-lr$tl-s$s" $col; done | tr '\n' ' ')
	else
		ref=$(scoreboard_ref "$t")
	fi
	for lr in $(ls "$k/runs" | sed -n 's/^salsa-probe-lr\(.*\)-s[0-9]*$/\1/p' | sort -gu); do
		old="" new=""
		for s in $(seq 10); do
			[ -d "$k/runs/salsa-probe-lr$lr-s$s" ] || continue
			old+="$(final "$d/runs/salsa-probe-lr$lr-s$s" $col) " new+="$(final "$k/runs/salsa-probe-lr$lr-s$s" $col) "
		done
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$lr" "$lstm" "$ref" "$old" "$new"
	done
done | awk -F'\t' '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
# a failed run counts as the worst: accuracy 0, perplexity +inf
function val(x, lstm) { return x == "fail" ? (lstm ? 1e300 : 0) : x + 0 }
function gap(x, ref, lstm) { return lstm ? (ref - x) / ref * 100 : (x - ref) * 100 }
# accuracy rounded as the scoreboard rounds it (halves up)
function v(x, lstm) { return lstm ? sprintf("%.4g", x) : sprintf("%.2f%%", int(x * 10000 + 0.5) / 100) }
function cell(x, ref, lstm,   g) { g = gap(x, ref, lstm); return sprintf("%s (%+.2f%s)%s", v(x, lstm), g, lstm ? "%" : " pp", (lstm ? g >= -2 : g >= -0.2) ? "" : " **miss**") }
{ lstm = $3; nr = split($4, r, " "); for (i = 1; i <= nr; i++) r[i] = val(r[i], lstm); ref = med(r, nr)
  n = split($5, o, " "); split($6, w, " "); bad = 0; better = 0
  for (i = 1; i <= n; i++) { o[i] = val(o[i], lstm); w[i] = val(w[i], lstm)
    if ((lstm && w[i] > 1e6) || (!lstm && w[i] < 0.2)) bad++
    if (lstm ? w[i] < o[i] : w[i] > o[i]) better++ }
  printf "| %s | %s | %s | %s | %s | %d | %d of %d |\n", $1, $2, v(ref, lstm), cell(med(o, n), ref, lstm), cell(med(w, n), ref, lstm), bad, better, n }'
