#!/usr/bin/env bash
# The ten-seed scoreboard of issue 9 (docs/parity/README.md, "Where it
# stands"): for each task, the tuned shb-hand's median final test metric,
# salsa-probe's gap to it from each lr0, and Schedule-Free AdamW's, with the
# acceptance's verdict: within 0.2 percentage points of accuracy, or within
# 2% of perplexity, or better.
#
# Everything is read from the runs' epochs.csv, so it also works for runs
# whose checkpoints did not come back (H27's, run on a device machine):
# - a run's final metric is its last row's test_ppl, or else test_acc; its
#   validation metric exp(val_loss) for a text, or else val_acc;
# - runs with fewer epochs than the longest of their directory (a run that
#   failed, at a rate that diverged) are left out, and counted on stderr;
# - shb-hand's lr is the one of the best median final validation metric,
#   as salsa compare picks it (ties: the smaller lr);
# - a median of an even number of seeds is the mean of the middle two.
#
# Usage: bash scripts/scoreboard.sh NAME=DIR[,PEERDIR] ...
#   DIR holds salsa-probe's and shb-hand's runs (DIR/runs/*/epochs.csv),
#   PEERDIR those of schedule-free-adamw (default DIR-peers, if it exists).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "| task | tuned shb-hand (median) | salsa-probe from lr0 1e-3 / 1e-2 / 1e-1 | within the bar? | Schedule-Free AdamW | within the bar? |"
echo "|---|---|---|---|---|---|"
for arg in "$@"; do
	name=${arg%%=*} dirs=${arg#*=}
	dir=${dirs%%,*} peer=
	[[ $dirs == *,* ]] && peer=${dirs#*,}
	[ -z "$peer" ] && [ -d "$dir-peers" ] && peer=$dir-peers
	files=()
	for f in "$dir"/runs/salsa-probe-lr0*/epochs.csv "$dir"/runs/shb-hand-lr*/epochs.csv; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ -n "$peer" ]; then
		for f in "$peer"/runs/schedule-free-adamw-*/epochs.csv; do
			[ -f "$f" ] && files+=("$f")
		done
	fi
	[ ${#files[@]} -gt 0 ] || { echo "$dir: no runs" >&2; exit 1; }
	awk -F, -v name="$name" '
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	function gap(m, t) { return ppl ? 100 * (t - m) / t : 100 * (m - t) }
	function fmt(g,   s) { s = sprintf("%+.2f%s", g, ppl ? "%" : " pp"); sub(/^-/, "−", s); return s } # the minus sign of the docs
	function ok(g) { return ppl ? g >= -2 : g >= -0.2 }
	FNR == 1 {
		for (i = 1; i <= NF; i++) col[$i] = i
		n = split(FILENAME, p, "/"); run = p[n-1]; sub(/-s[0-9]+$/, "", run)
		seen[FILENAME] = 1
		next
	}
	{ last[FILENAME] = $0; rows[FILENAME] = FNR - 1; of[FILENAME] = run }
	END {
		for (f in seen) if (!(f in last)) short++ # failed in its first epoch
		for (f in last) if (rows[f] > most) most = rows[f]
		for (f in last) {
			if (rows[f] < most) { short++; continue }
			split(last[f], c, ",")
			ppl = c[col["test_ppl"]] != ""
			r = of[f]
			test[r, ++cnt[r]] = ppl ? c[col["test_ppl"]] : c[col["test_acc"]]
			val[r, cnt[r]] = ppl ? exp(c[col["val_loss"]]) : c[col["val_acc"]]
			if (r ~ /^shb-hand-lr/) { lr = substr(r, 12); lrs[lr] = 1 }
		}
		best = ""
		for (lr in lrs) {
			r = "shb-hand-lr" lr
			for (i = 1; i <= cnt[r]; i++) v[i] = val[r, i]
			m = med(v, cnt[r])
			if (best == "" || (ppl ? m < bv : m > bv) || m == bv && lr + 0 < best + 0) { best = lr; bv = m }
		}
		if (best == "") { printf "%s: no finished shb-hand run: no row\n", name > "/dev/stderr"; exit }
		r = "shb-hand-lr" best
		for (i = 1; i <= cnt[r]; i++) v[i] = test[r, i]
		t = med(v, cnt[r]); nt = cnt[r]
		cells = ""; all = 1
		split("0.001 0.01 0.1", l0, " ")
		for (k = 1; k <= 3; k++) {
			r = "salsa-probe-lr" l0[k]
			if (!cnt[r]) { cells = cells (k > 1 ? " / " : "") "—"; all = 0; continue }
			for (i = 1; i <= cnt[r]; i++) v[i] = test[r, i]
			g = gap(med(v, cnt[r]), t)
			cells = cells (k > 1 ? " / " : "") (ok(g) ? fmt(g) : "**" fmt(g) "**")
			if (!ok(g)) all = 0
			if (cnt[r] != nt) cells = cells " (" cnt[r] " seeds)"
		}
		sf = "(not run)"; sfok = ""
		r = "schedule-free-adamw-lr0.0025"
		if (cnt[r]) {
			for (i = 1; i <= cnt[r]; i++) v[i] = test[r, i]
			g = gap(med(v, cnt[r]), t); sf = ok(g) ? fmt(g) : "**" fmt(g) "**"; sfok = ok(g) ? "yes" : "**no**"
			if (cnt[r] != nt) sf = sf " (" cnt[r] " seeds)"
		}
		printf "| %s | %s at lr %s (%d seeds) | %s | %s | %s | %s |\n", name, (ppl ? sprintf("%.3f", t) : sprintf("%.2f%%", 100 * t)), best, nt, cells, (all ? "yes" : "**no**"), sf, sfok
		if (short) printf "%s: %d runs left out: fewer epochs than %d\n", name, short, most > "/dev/stderr"
	}' "${files[@]}"
done
