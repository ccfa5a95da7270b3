#!/usr/bin/env bash
# Issue 9's measurements: each idea from lr0 ∈ {1e-3, 1e-2, 1e-1} (3 seeds)
# against the grid-tuned cut schedule (shb-hand, cuts ×0.1 after one and two
# thirds of the epochs, lr picked by validation), every run holding out 10%.
# Each measurement is a salsa compare directory in runs/parity/<name>; the
# tuned grid's runs are copied from a directory that has them (the same task,
# the same settings), so that it is trained once.
# Usage: bash scripts/parity.sh [PART ...]  (parts: logreg mlp deep momentum momentum-figure heldout heldout-peers
# probe-cnn probe-mlp probe-logreg probe-deep probe-heldout probe-figure; early-cnn early-mlp early-logreg
# early-deep early-heldout: the same parts with the probe started early, probe_early=1; early-figure;
# rollback-cnn rollback-mlp rollback-logreg rollback-deep rollback-heldout: early, and a failed rate
# rolled back to the last accepted window's parameters, probe_rollback=1; rollback-figure; marks-figure (a rollback run with the probe marked);
# heldout2: the second held-out tasks of docs/parity/heldout2.md, with the rollback;
# heldout2-peers: Schedule-Free AdamW and SGD, untuned, beside the same tuned runs;
# heldout2-wide: the shb-hand grid one step above its top where the tuned lr is the top;
# wide: the same for the cnn, H4 and the lstm;
# heldout3: the third held-out tasks of docs/parity/heldout3.md, grids widened until the tuned lr is inside;
# heldout3-peers: Schedule-Free AdamW and SGD beside the same tuned runs;
# heldout4: the fourth held-out tasks of docs/parity/heldout4.md, before and with probe_settle=1; heldout4-peers: Schedule-Free AdamW;
# heldout5: the fifth, docs/parity/heldout5.md, salsa-probe with the copy kept only after windows ending clean; heldout5-peers: Schedule-Free AdamW;
# clean: the ten-seed runs (seeds-h5, -h10, -h11, -h13) that change run again;
# heldout6: the sixth, docs/parity/heldout6.md, salsa-probe with the copy kept only once the next loss confirms it; heldout6-peers: Schedule-Free AdamW;
# confirm: the ten-seed runs (seeds-h4-method, -h9, -h14, -h17) that change run again;
# heldout7: the seventh, docs/parity/heldout7.md, salsa-probe; heldout7-retry: with probe_retry=1; heldout7-peers: Schedule-Free AdamW;
# heldout8: the eighth, docs/parity/heldout8.md, salsa-probe; heldout8-val: with probe_val=1; heldout8-peers: Schedule-Free AdamW;
# heldout9: the ninth, docs/parity/heldout9.md, run without a change: salsa-probe and the default salsa; heldout9-peers: Schedule-Free AdamW;
# heldout10: the tenth, docs/parity/heldout10.md, salsa-probe with its average and the default salsa; heldout10-peers: Schedule-Free AdamW;
# heldout11: the eleventh, docs/parity/heldout11.md, run without a change: salsa-probe as built and the default salsa; heldout11-peers: Schedule-Free AdamW;
# heldout12: the twelfth, docs/parity/heldout12.md, salsa-probe as built; heldout12-level: with probe_level_copy=1 (docs/parity/climb.md); heldout12-peers: Schedule-Free AdamW;
# heldout13: the thirteenth, docs/parity/heldout13.md, run without a change: salsa-probe as built and the default salsa; heldout13-peers: Schedule-Free AdamW;
# heldout14: the fourteenth, docs/parity/heldout14.md, run without a change, the same; heldout14-peers: Schedule-Free AdamW;
# heldout15: the fifteenth, docs/parity/heldout15.md, run without a change, the same; heldout15-peers: Schedule-Free AdamW;
# heldout16: the sixteenth, docs/parity/heldout16.md, run without a change, the same; heldout16-peers: Schedule-Free AdamW;
# heldout17: the seventeenth, docs/parity/heldout17.md, salsa-probe as built and the default salsa; heldout17-warm: with warmup_share=0.2
# (docs/parity/budget-warmup.md, not kept); heldout17-peers: Schedule-Free AdamW;
# heldout18: the eighteenth, docs/parity/heldout18.md, the same; heldout18-welch: with probe_welch=1 (docs/parity/welch.md,
# the third screen); heldout18-peers: Schedule-Free AdamW; heldout19, heldout19-peers: the nineteenth, docs/parity/heldout19.md (heldout19-guard: with warmup_guard=1, docs/parity/guard.md);
# heldout20, heldout20-peers: the twentieth, docs/parity/heldout20.md;
# heldout21, heldout21-peers, heldout21-cap: the twenty-first, docs/parity/heldout21.md, run with probe_norm_cap=1's fifth version;
# heldout22, heldout22-peers, heldout22-keep: the twenty-second, docs/parity/heldout22.md (with probe_keep_rate=1);
# keep-TASK: probe_keep_rate=1 over ten seeds (docs/parity/keep-rate.md); backoff-TASK: probe_backoff=4 (docs/parity/backoff.md);
# cuts-TASK: decay_cuts=1 (docs/parity/cuts.md); val-TASK: probe_val=1 (on H35 and H36, after they were run);
# built-TASK: the built salsa-probe alone, ten seeds from every lr0 (LR0S narrows them; the sixth averaging screen);
# default-TASK: the default salsa over ten seeds (on H35–H39, which had three); rebuild-TASK: the ten-seed runs trained again with the current build;
# retry: probe_retry=1 over ten seeds on the tasks seen before it, the runs it cannot alter copied, into runs/parity/retry-TASK;
# settle: probe_settle=1 post hoc on the tasks seen before (H10, the lstm, H9, H11, H12, the mlp, H8, the cnn, logreg, H4);
# settle2: the same on logreg without weight decay, H1–H3, H5–H7 and resnet20;
# lstm-why: the lstm under shb-hand, wsd and cosine at lr 30 and 100, and the rollback method from lr0 0.01 and 30;
# seeds-mlp seeds-lstm seeds-h8 seeds-h13 seeds-h19: salsa-probe, shb-hand and Schedule-Free AdamW over seeds 1–10 (SEEDS) where salsa-probe misses the bar;
# seeds-logreg seeds-logreg-wd0 seeds-h1 seeds-h2 seeds-h3 seeds-h5 seeds-h6 seeds-h7 seeds-h10 seeds-h11 seeds-h12 seeds-h15 seeds-h16,
# later seeds-h9 seeds-h14 seeds-h17 seeds-h18 seeds-h20, after H21–H24 seeds-h21 to seeds-h24, seeds-cnn, seeds-resnet20, after H25–H29 seeds-h25 to seeds-h29,
# after H30–H34 seeds-h30 to seeds-h34, and after H35–H39 seeds-h35 to seeds-h39 (seeds-h4-peers: Schedule-Free AdamW alone on H4, beside confirm-h4):
# the same where it passes: the logreg and mlp tasks, the lstm and the cnn nearest the bar)
# LRS=a,b,c sets a seeds-* part's shb-hand grid where its three-seed directory is not here (runs/ is not in git);
# NOBUILD=1 uses the bin/salsa there is; HS="N ..." runs only tasks HN of a heldoutK part; SEEDS=N runs seeds 1…N (3; the seeds-* parts 10);
# JOBS=N passes --jobs N to every compare; METHODS=a,b replaces the methods of a heldoutK part (not its variants or peers),
# so that a set's default salsa can be left to a later call, which trains only the runs not yet finished.
# scoreboard prints the ten-seed table of every task that has ten-seed runs (SCOREBOARD=1 scripts/parity-summary.sh; NOBUILD=1 needs no build);
# cap-hN (N in 75, 77, 79–82, 85, 86, 91: tasks.sh cap_screened) first links the runs it reads for those tasks since probe_norm_cap joined salsa-probe;
# on any other task, cap-TASK trains salsa-probe over ten seeds with the build, beside shb-hand at LRS (e.g. LRS=30,100 JOBS=2 cap-lstm).
# The variant parts heldout19-guard and heldout21-cap set a key that has since joined salsa-probe, which refuses it:
# they reproduce with the build before it joined (for heldout21-cap, any commit from 2c43357 to 037969a).
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(logreg mlp deep)
source scripts/build.sh
build_salsa
starts=0.001,0.01,0.1
peers=adam-warmup,schedule-free-sgd,schedule-free-adamw,prodigy,dadapt-sgd,dog

# copy_new DIR RUN...: each RUN copied into DIR/runs (made if missing)
# unless a run of its name is there already, so that compare skips it.
copy_new() {
	local dir=$1 r; shift
	mkdir -p "$dir/runs"
	for r in "$@"; do
		[ -e "$dir/runs/$(basename "$r")" ] || cp -r "$r" "$dir/runs/"
	done
}

# link_runs DIR RUN...: each RUN (a run directory, relative to the
# repository) linked into DIR/runs under its own name, for a directory that
# gathers runs made elsewhere (guard-TASK, cap-TASK)
link_runs() {
	local dir=$1 r; shift
	mkdir -p "$dir/runs"
	for r in "$@"; do
		ln -sfn "../../../../$r" "$dir/runs/$(basename "$r")"
	done
}

# parity NAME FROM ARGS...: salsa compare into runs/parity/NAME, with the
# shb-hand runs of runs/FROM/runs copied first (FROM "-": none).
parity() {
	local name=$1 from=$2; shift 2
	local dir=runs/parity/$name
	mkdir -p "$dir/runs"
	[ "$from" = - ] || copy_new "$dir" runs/"$from"/runs/shb-hand-*
	echo "== $name: salsa compare $* --seeds ${SEEDS:-3} --out $dir"
	local st=(--start-lr0s $starts)
	# the peers run untuned, at their authors' defaults: no start rates
	[[ " $* " == *" --start-lr0s "* || -n "${PEERS:-}" ]] && st=()
	./bin/salsa compare "$@" "${st[@]}" --seeds "${SEEDS:-3}" ${JOBS:+--jobs "$JOBS"} --no-plots --out "$dir" | tail -1
}

# widen LRS EDGE: LRS (comma-separated, ascending, of the 1-3-10 sequence)
# with the next value beyond the end EDGE names ("largest" or "smallest");
# fails when EDGE is empty: the tuned lr is inside the grid.
widen() {
	local lrs=$1 edge=$2 first last
	first=${lrs%%,*} last=${lrs##*,}
	case $edge in
	largest) awk -v x="$last" 'BEGIN { printf "%s,%g\n", ARGV[1], (substr(sprintf("%e", x), 1, 1) == "1" ? 3 : 10 / 3) * x }' "$lrs" ;;
	smallest) awk -v x="$first" 'BEGIN { printf "%g,%s\n", (substr(sprintf("%e", x), 1, 1) == "1" ? 0.3 : 1 / 3) * x, ARGV[1] }' "$lrs" ;;
	*) return 1 ;;
	esac
}

# around LR: LR between its neighbours on the 1-3-10 sequence (100 → 30,100,300;
# 0.1 → 0.03,0.1,0.3); fails when LR is empty.
around() {
	[ -n "$1" ] || return 1
	widen "$(widen "$1" largest)" smallest
}

# tuned_lrs NAME: the --lr0s shb-hand was tuned over in runs/parity/NAME
# (from its runs' names where it has no summary.json: H27's device runs).
tuned_lrs() {
	if [ -f "runs/parity/$1/summary.json" ]; then
		jq -r '[.rows[] | select(.name == "shb-hand") | .tuning[].lr0] | map(tostring) | join(",")' "runs/parity/$1/summary.json"
	else
		ls "runs/parity/$1/runs" | sed -n 's/^shb-hand-lr\(.*\)-s1$/\1/p' | sort -g | paste -sd,
	fi
}

# widened NAME LRS ARGS...: parity NAME with shb-hand tuned over LRS, the
# grid widened one value of the 1-3-10 sequence at a time (widen) until the
# tuned lr is inside it, as heldout3.md and heldout4.md ask.
widened() {
	local name=$1 lrs=$2; shift 2
	for _ in 1 2 3 4; do
		parity "$name" - "$@" --grid shb-hand --lr0s "$lrs"
		lrs=$(widen "$lrs" "$(jq -r '.rows[] | select(.name == "shb-hand") | .edge // ""' "runs/parity/$name/summary.json")") || break
	done
}

# figure NAME (RUN LABEL)...: docs/parity/NAME-{lr,loss}.png, salsa plot's
# lr and training-loss overlays of the runs runs/parity/RUN, each labelled
# LABEL in the legend (needs jq).
figure() {
	local name=$1 tmp runs=() i=0; shift
	tmp=$(mktemp -d)
	while [ $# -gt 0 ]; do
		i=$((i + 1))
		cp -r "runs/parity/$1" "$tmp/r$i"
		jq --arg l "$2" '.plan.options.label = $l' "runs/parity/$1/run.json" >"$tmp/r$i/run.json"
		runs+=("$tmp/r$i")
		shift 2
	done
	./bin/salsa plot --runs "$(IFS=,; echo "${runs[*]}")" --out "$tmp/fig" >/dev/null
	cp "$tmp/fig/compare_lr.png" "docs/parity/$name-lr.png"
	cp "$tmp/fig/compare_loss.png" "docs/parity/$name-loss.png"
	rm -rf "$tmp"
}

# the tasks and task_args
source scripts/tasks.sh

# current_name TASK: current_dir TASK without its runs/parity/, the name parity takes
current_name() {
	local d
	d=$(current_dir "$1")
	echo "${d#runs/parity/}"
}

# unconfirmed_rollback RUN: whether the run's replay rolls back to a copy
# the candidate protocol would not have kept: after its last window that
# made a kept copy, the next loss was an outlier ("outlier at copy"), and the
# next event of the probe is the rollback.
unconfirmed_rollback() {
	./bin/salsa replay --run "$1" | awk -F, '
		$2 == "probe" && $NF == "outlier at copy" { pend = 1; next }
		$2 == "probe" && $5 == "1" && $NF == "" { pend = 0 }
		$2 == "decay" && $NF == "rollback" && pend { hit = 1 }
		END { exit !hit }'
}

# written_lrs ARGS...: the shb-hand grid heldout3.md and heldout4.md write
# down for a task, before any widening: for the lstm (its gradient clipped
# at 0.25) 1–300, for the others 0.01–3.
written_lrs() {
	if [[ " $* " == *" --model lstm "* ]]; then echo 1,3,10,30,100,300; else echo 0.01,0.03,0.1,0.3,1,3; fi
}
for part in "${parts[@]}"; do
	# early-X is probe-X with probe_early=1, into runs/parity/*-early;
	# rollback-X adds probe_rollback=1, into runs/parity/*-rollback
	probe=(--set probe=1) sfx=probe
	if [[ $part == early-* && $part != early-figure ]]; then
		part=probe-${part#early-} probe=(--set probe=1 --set probe_early=1) sfx=early
	elif [[ $part == rollback-* && $part != rollback-figure ]]; then
		part=probe-${part#rollback-} probe=(--set probe=1 --set probe_early=1 --set probe_rollback=1) sfx=rollback
	fi
	case $part in
	logreg)
		parity mnist-logreg - --methods salsa,salsa-val,ssls,shb-hand "${logreg[@]}"
		# salsa-budget's two decays: over the last 20% of the budget (0), from the switch (1)
		parity mnist-logreg-from parity/mnist-logreg --methods salsa-budget,shb-hand --sweep decay_from_switch=0,1 "${logreg[@]}"
		# (mnist-logreg-nodrop-from, salsa-budget with --set salsa_drop_after=1000000000, showed that SASA+'s drops change nothing
		# with the decay from the switch; salsa train now refuses that key there, so the part no longer runs it)
		parity mnist-logreg-slope parity/mnist-logreg --methods slope,shb-hand "${logreg[@]}" --start-lr0s 0.5
		parity mnist-logreg-theta parity/mnist-logreg --methods salsa,shb-hand --sweep theta=0.25,0.5 "${logreg[@]}"
		parity mnist-logreg-nmin parity/mnist-logreg --methods salsa,shb-hand --sweep nmin=100,2000 "${logreg[@]}"
		parity mnist-logreg-wd0 - --methods salsa,shb-hand --set wd=0 "${logreg[@]}"
		parity mnist-logreg-wd0-from parity/mnist-logreg-wd0 --methods salsa-budget,shb-hand --set wd=0 --sweep decay_from_switch=0,1 "${logreg[@]}"
		;;
	mlp)
		parity mnist-mlp-from compare/mnist-mlp --methods salsa,salsa-budget,shb-hand --sweep decay_from_switch=0,1 "${mlp[@]}"
		# (mnist-mlp-nodrop-from: as mnist-logreg-nodrop-from, no longer run)
		;;
	deep)
		parity fashion-mnist-cnn compare/fashion-mnist-cnn --methods salsa-budget,shb-hand "${cnn[@]}" --grid shb-hand --lr0s 0.1,0.3,1
		parity tinyshakespeare-lstm compare/tinyshakespeare-lstm --methods salsa-budget,shb-hand "${lstm[@]}" --grid shb-hand --lr0s 0.3,1,3
		parity tinyshakespeare-lstm-fraction compare/tinyshakespeare-lstm --methods salsa-budget,shb-hand --set decay_from_switch=0 "${lstm[@]}" --grid shb-hand --lr0s 0.3,1,3
		parity fashion-mnist-resnet20 compare/fashion-mnist-resnet20 --methods salsa-budget,shb-hand "${resnet20[@]}" --grid shb-hand --lr0s 0.1,0.3,1
		;;
	momentum) # the line search along the update's direction d_k (ls_dir=d) instead of g
		parity mnist-logreg-alongd parity/mnist-logreg --methods salsa-budget,shb-hand --set ls_dir=d "${logreg[@]}"
		parity mnist-mlp-alongd compare/mnist-mlp --methods salsa-budget,shb-hand --set ls_dir=d "${mlp[@]}"
		parity fashion-mnist-cnn-alongd compare/fashion-mnist-cnn --methods salsa-budget,shb-hand --set ls_dir=d "${cnn[@]}" --grid shb-hand --lr0s 0.1,0.3,1
		;;
	momentum-figure) # docs/parity/momentum-{lr,loss}.png: the cnn's rate and loss along g and along d (needs jq)
		figure momentum fashion-mnist-cnn/runs/salsa-budget-lr0.01-s1 "along g (salsa-budget), seed 1" \
			fashion-mnist-cnn-alongd/runs/salsa-budget-lr0.01-s3 "along d, seed 3" \
			fashion-mnist-cnn-alongd/runs/salsa-budget-lr0.01-s2 "along d, seed 2 (NaN loss at step 135)" \
			fashion-mnist-cnn/runs/shb-hand-lr1-s1 "tuned shb-hand (lr 1), seed 1"
		;;
	probe-cnn) # salsa-budget with the rate probe (probe=1): after the switch, double the rate while window means do not rise
		parity fashion-mnist-cnn-$sfx compare/fashion-mnist-cnn --methods salsa-budget,shb-hand "${probe[@]}" "${cnn[@]}" --grid shb-hand --lr0s 0.1,0.3,1
		;;
	probe-mlp)
		parity mnist-mlp-$sfx compare/mnist-mlp --methods salsa-budget,shb-hand "${probe[@]}" "${mlp[@]}"
		;;
	probe-logreg)
		parity mnist-logreg-$sfx parity/mnist-logreg --methods salsa-budget,shb-hand "${probe[@]}" "${logreg[@]}"
		parity mnist-logreg-wd0-$sfx parity/mnist-logreg-wd0 --methods salsa-budget,shb-hand --set wd=0 "${probe[@]}" "${logreg[@]}"
		;;
	probe-deep)
		parity tinyshakespeare-lstm-$sfx compare/tinyshakespeare-lstm --methods salsa-budget,shb-hand "${probe[@]}" "${lstm[@]}" --grid shb-hand --lr0s 0.3,1,3
		parity fashion-mnist-resnet20-$sfx compare/fashion-mnist-resnet20 --methods salsa-budget,shb-hand "${probe[@]}" "${resnet20[@]}" --grid shb-hand --lr0s 0.1,0.3,1
		;;
	probe-figure) # docs/parity/probe-{lr,loss}.png: the cnn's rate and loss with the probe and without (needs jq)
		figure probe fashion-mnist-cnn/runs/salsa-budget-lr0.01-s1 "salsa-budget, seed 1" \
			fashion-mnist-cnn-probe/runs/salsa-budget-lr0.01-s1 "salsa-budget + probe, seed 1" \
			fashion-mnist-cnn-probe/runs/salsa-budget-lr0.01-s2 "salsa-budget + probe, seed 2" \
			fashion-mnist-cnn/runs/shb-hand-lr1-s1 "tuned shb-hand (lr 1), seed 1"
		;;
	early-figure) # docs/parity/early-{lr,loss}.png: the cnn's rate and loss with the probe early, at the switch, and tuned (needs jq)
		figure early fashion-mnist-cnn-probe/runs/salsa-budget-lr0.01-s1 "probe at the switch, seed 1" \
			fashion-mnist-cnn-early/runs/salsa-budget-lr0.01-s2 "probe early, seed 2" \
			fashion-mnist-cnn-early/runs/salsa-budget-lr0.01-s1 "probe early, seed 1 (NaN loss at step 69)" \
			fashion-mnist-cnn/runs/shb-hand-lr1-s1 "tuned shb-hand (lr 1), seed 1"
		;;
	rollback-figure) # docs/parity/rollback-{lr,loss}.png: the cnn run that diverged without the rollback, with it, and tuned (needs jq)
		figure rollback fashion-mnist-cnn-early/runs/salsa-budget-lr0.01-s1 "probe early, seed 1 (NaN loss at step 69)" \
			fashion-mnist-cnn-rollback/runs/salsa-budget-lr0.01-s1 "probe early + rollback, seed 1" \
			fashion-mnist-cnn-rollback/runs/salsa-budget-lr0.01-s3 "probe early + rollback, seed 3" \
			fashion-mnist-cnn/runs/shb-hand-lr1-s1 "tuned shb-hand (lr 1), seed 1"
		;;
	marks-figure) # docs/parity/rollback-run-lr.png: salsa plot's learning-rate figure of one rollback run, the probe marked
		tmp=$(mktemp -d)
		./bin/salsa plot --run runs/parity/fashion-mnist-cnn-rollback/runs/salsa-budget-lr0.01-s1 --out "$tmp" >/dev/null
		cp "$tmp/lr.png" docs/parity/rollback-run-lr.png
		rm -rf "$tmp"
		;;
	heldout2 | heldout2-peers | heldout2-wide) # docs/parity/heldout2.md, written before any of them was run
		grid=(--grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1)
		rb=(--set probe=1 --set probe_early=1 --set probe_rollback=1)
		for h in 5 6 7 8; do
			task_args h$h
			[ $h = 8 ] && grid=(--grid shb-hand --lr0s 0.3,1,3,10)
			case $part in
			heldout2) parity heldout2-h$h - --methods salsa-budget,shb-hand "${rb[@]}" "${args[@]}" "${grid[@]}" ;;
			heldout2-peers) PEERS=1 parity heldout2-h$h-peers parity/heldout2-h$h --methods schedule-free-adamw,schedule-free-sgd,shb-hand "${args[@]}" "${grid[@]}" ;;
			heldout2-wide) # after the runs: H5 and H8 were tuned at the grid's top
				case $h in
				5) PEERS=1 parity heldout2-h5-wide parity/heldout2-h5 --methods shb-hand "${args[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1,3 ;;
				8) PEERS=1 parity heldout2-h8-wide parity/heldout2-h8 --methods shb-hand "${args[@]}" --grid shb-hand --lr0s 0.3,1,3,10,30,100,300 ;;
				esac ;;
			esac
		done
		;;
	heldout3 | heldout3-peers) # docs/parity/heldout3.md, written before any of them was run
		rb=(--set probe=1 --set probe_early=1 --set probe_rollback=1)
		for h in 9 10 11 12; do
			task_args h$h
			lrs=$(written_lrs "${args[@]}")
			if [ "$part" = heldout3 ]; then
				widened heldout3-h$h $lrs --methods salsa-budget,shb-hand "${rb[@]}" "${args[@]}"
			else # the untuned peers beside the same tuned shb-hand runs
				PEERS=1 parity heldout3-h$h-peers parity/heldout3-h$h --methods schedule-free-adamw,schedule-free-sgd,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs heldout3-h$h)"
			fi
		done
		;;
	heldout4 | heldout4-peers) # docs/parity/heldout4.md, written before probe_settle was made and before any of them was run
		rb=(--set probe=1 --set probe_early=1 --set probe_rollback=1)
		for h in 13 14 15 16; do
			task_args h$h
			lrs=$(written_lrs "${args[@]}")
			if [ "$part" = heldout4 ]; then
				# the method before probe_settle, then with it beside the same tuned runs
				widened heldout4-h$h $lrs --methods salsa-budget,shb-hand "${rb[@]}" "${args[@]}"
				parity heldout4-h$h-settle parity/heldout4-h$h --methods salsa-budget,shb-hand "${rb[@]}" --set probe_settle=1 "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs heldout4-h$h)"
			else
				PEERS=1 parity heldout4-h$h-peers parity/heldout4-h$h --methods schedule-free-adamw,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs heldout4-h$h)"
			fi
		done
		;;
	heldout5 | heldout5-peers | heldout6 | heldout6-peers | heldout7 | heldout7-peers | heldout7-retry | heldout8 | heldout8-peers | heldout8-val | heldout9 | heldout9-peers | heldout10 | heldout10-peers | heldout11 | heldout11-peers | heldout12 | heldout12-peers | heldout12-level | heldout13 | heldout13-peers | heldout14 | heldout14-peers | heldout15 | heldout15-peers | heldout16 | heldout16-peers | heldout17 | heldout17-peers | heldout17-warm | heldout18 | heldout18-peers | heldout18-welch | heldout19 | heldout19-peers | heldout19-guard | heldout20 | heldout20-peers | heldout21 | heldout21-peers | heldout21-cap | heldout22 | heldout22-peers | heldout22-keep)
		# docs/parity/heldout5.md, written before the copy kept after an accepted window changed, heldout6.md,
		# written before the copy became a candidate to confirm, and heldout7.md, before probe_retry was made;
		# each before any of its tasks was run. heldout7-retry: salsa-probe with probe_retry=1, beside the same tuned runs;
		# heldout8.md, before probe_val was made; heldout8-val: salsa-probe with probe_val=1;
		# heldout9.md, run without a change, with the default salsa beside salsa-probe;
		# heldout10.md, written before the averaging screens (docs/parity/average.md), run with salsa-probe's average;
		# heldout11.md, run without a change, salsa-probe as built;
		# heldout12.md, written before any run of probe_level_copy: heldout12-level runs salsa-probe with it;
		# heldout13.md to heldout16.md, run without a change, salsa-probe as built;
		# heldout17.md, salsa-probe as built; heldout17-warm: salsa-probe with warmup_share=0.2, whose screen failed;
		# heldout18.md, salsa-probe as built; heldout18-welch: with probe_welch=1 (docs/parity/welch.md, the third screen)
		# heldout19.md, salsa-probe as built; heldout19-guard: with warmup_guard=1 (docs/parity/guard.md, step 4)
		# heldout20.md, salsa-probe as built with the guard (warmup_guard since it joined salsa-probe)
		# heldout21.md, kept for the next change: salsa-probe as built, beside which that change is a variant part
		# heldout21-cap: with probe_norm_cap=1, its fifth version (docs/parity/norm.md, written before the set's runs)
		# heldout22.md, written before any run of it, for probe_keep_rate should its rule hold (docs/parity/keep-cap.md):
		# heldout22-keep runs salsa-probe with probe_keep_rate=1
		# a variant part runs salsa-probe with the keys of its entry (space-separated), beside the set's tuned runs, into $set-SUFFIX-hN
		declare -A variants=([heldout7-retry]=probe_retry=1 [heldout8-val]=probe_val=1 [heldout12-level]=probe_level_copy=1 [heldout17-warm]=warmup_share=0.2
			[heldout18-welch]=probe_welch=1 [heldout19-guard]=warmup_guard=1
			[heldout21-cap]=probe_norm_cap=1 [heldout22-keep]=probe_keep_rate=1)
		set=${part%-peers} hs=(17 18 19 20)
		[ -n "${variants[$part]:-}" ] && set=${part%-*}
		# the tasks of heldoutN.md: H17–H20 (N = 5), H21–H24 (6), then five a set, H(5N−10)–H(5N−6)
		n=${set#heldout}
		case $n in
		5) ;;
		6) hs=(21 22 23 24) ;;
		*) hs=($(seq $((5 * n - 10)) $((5 * n - 6)))) ;;
		esac
		[ -z "${HS:-}" ] || read -ra hs <<<"$HS" # HS="30 31": those tasks of the set only
		for h in "${hs[@]}"; do
			task_args h$h
			if [ "$part" = "$set" ]; then
				methods=salsa-probe,shb-hand
				[[ $set =~ ^heldout(9|1[0-9]|2[012])$ ]] && methods=salsa-probe,salsa,shb-hand
				methods=${METHODS:-$methods}
				widened $set-h$h "$(written_lrs "${args[@]}")" --methods $methods "${args[@]}"
			elif [ -n "${variants[$part]:-}" ]; then
				sets=()
				for kv in ${variants[$part]}; do sets+=(--set "$kv"); done
				parity $set-${part##*-}-h$h parity/$set-h$h --methods salsa-probe,shb-hand "${sets[@]}" "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $set-h$h)"
			else
				PEERS=1 parity $set-h$h-peers parity/$set-h$h --methods schedule-free-adamw,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $set-h$h)"
			fi
		done
		;;
	clean) # after the change heldout5.md names: the ten-seed runs of salsa-probe with an accepted window ending on an outlier
		# (their replay says so) run again, the others copied, as they are unchanged, into runs/parity/clean-TASK
		for t in h5 h10 h11 h13; do
			task_args $t
			mkdir -p runs/parity/clean-$t/runs
			for r in runs/parity/seeds-$t/runs/*; do
				[ -e "runs/parity/clean-$t/runs/$(basename "$r")" ] && continue
				if [[ $(basename "$r") != salsa-probe-* || $(./bin/salsa replay --run "$r") != *',ends on outlier'* ]]; then
					cp -r "$r" runs/parity/clean-$t/runs/
				fi
			done
			SEEDS=10 parity clean-$t - --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs seeds-$t)"
		done
		;;
	confirm) # after the change heldout6.md names: the ten-seed runs of salsa-probe whose rollback put back a copy whose own
		# loss was an outlier (unconfirmed_rollback) run again, the others copied, as they are unchanged, into runs/parity/confirm-TASK
		for t in h4 h9 h14 h17; do
			task_args $t
			from=seeds-$t
			[ $t = h4 ] && from=seeds-h4-method
			mkdir -p runs/parity/confirm-$t/runs
			for r in runs/parity/$from/runs/*; do
				[ -e "runs/parity/confirm-$t/runs/$(basename "$r")" ] && continue
				if [[ $(basename "$r") != salsa-probe-* ]] || ! unconfirmed_rollback "$r"; then
					cp -r "$r" runs/parity/confirm-$t/runs/
				fi
			done
			SEEDS=10 parity confirm-$t - --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $from)"
		done
		;;
	retry) # after heldout7.md: probe_retry=1 over ten seeds on the tasks seen before, into runs/parity/retry-TASK, beside the
		# tuned runs of the latest ten-seed directory of each task (H1, H7, H16 and H20 have no window rejected on its mean: unchanged)
		for t in h19 h22 h10 h13 h8 lstm mlp h14 h17 cnn h21 h9 h4 h5 h3 h6 h11 h15 h18 h23 h2 h12 h24 logreg logreg-wd0; do
			from=seeds-$t
			case $t in h4 | h9 | h14 | h17) from=confirm-$t ;; h5 | h10 | h11 | h13) from=clean-$t ;; esac
			task_args $t
			SEEDS=10 parity retry-$t parity/$from --methods salsa-probe,shb-hand --set probe_retry=1 "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $from)"
		done
		;;
	settle) # post hoc: the rollback method with probe_settle=1 on tasks seen before, beside shb-hand at its tuned lr and a neighbour
		st=(--methods salsa-budget,shb-hand --set probe=1 --set probe_early=1 --set probe_rollback=1 --set probe_settle=1)
		parity settle-h10 parity/heldout3-h10 "${st[@]}" "${h10[@]}" --grid shb-hand --lr0s 1,3,10,30,100,300
		parity settle-lstm parity/lstm-why "${st[@]}" "${lstm[@]}" --grid shb-hand --lr0s 30,100
		parity settle-h9 parity/heldout3-h9 "${st[@]}" "${h9[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1,3
		parity settle-h11 parity/heldout3-h11 "${st[@]}" "${h11[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1,3
		parity settle-h12 parity/heldout3-h12 "${st[@]}" "${h12[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1,3
		parity settle-mlp - "${st[@]}" "${mlptask[@]}" --grid shb-hand --lr0s 0.1,1
		parity settle-h8 - "${st[@]}" "${h8[@]}" --grid shb-hand --lr0s 30,100
		parity settle-cnn - "${st[@]}" "${cnn[@]}" --grid shb-hand --lr0s 0.3,1
		parity settle-logreg - "${st[@]}" --dataset mnist --model logreg --epochs 30 --jobs 1 --grid shb-hand --lr0s 0.03,0.1
		parity settle-h4 - "${st[@]}" "${h4[@]}" --grid shb-hand --lr0s 0.3,1
		;;
	settle2) # post hoc, the tasks settle left: logreg without weight decay, H1–H3, H5–H7 and resnet20, shb-hand at its tuned lr and the one below
		st=(--methods salsa-budget,shb-hand --set probe=1 --set probe_early=1 --set probe_rollback=1 --set probe_settle=1)
		parity settle-logreg-wd0 - "${st[@]}" --dataset mnist --model logreg --epochs 30 --set wd=0 --jobs 1 --grid shb-hand --lr0s 0.03,0.1
		parity settle-h1 - "${st[@]}" "${h1[@]}" --grid shb-hand --lr0s 0.03,0.1
		parity settle-h2 - "${st[@]}" "${h2[@]}" --grid shb-hand --lr0s 0.1,0.3
		parity settle-h7 - "${st[@]}" "${h7[@]}" --grid shb-hand --lr0s 0.1,0.3
		parity settle-h3 - "${st[@]}" "${h3[@]}" --grid shb-hand --lr0s 0.1,0.3
		parity settle-h6 - "${st[@]}" "${h6[@]}" --grid shb-hand --lr0s 0.1,0.3
		parity settle-h5 - "${st[@]}" "${h5[@]}" --grid shb-hand --lr0s 0.3,1
		parity settle-resnet20 - "${st[@]}" "${resnet20[@]}" --jobs 2 --grid shb-hand --lr0s 0.1,0.3
		;;
	lstm-why) # after H5–H8: the lstm under other schedules at the widened grid's rates, and the rollback from a high lr0
		PEERS=1 parity lstm-why - --methods shb-hand,wsd,cosine "${lstm[@]}" --grid shb-hand,wsd,cosine --lr0s 30,100
		PEERS=1 parity lstm-why-rollback - --methods salsa-budget --set probe=1 --set probe_early=1 --set probe_rollback=1 "${lstm[@]}" --lr0s 0.01
		PEERS=1 parity lstm-why-rollback-30 - --methods salsa-budget --set probe=1 --set probe_early=1 --set probe_rollback=1 "${lstm[@]}" --lr0s 30
		;;
	seeds-h4-peers) # after H30–H34: Schedule-Free AdamW over ten seeds on H4, the one task whose peer had three, beside confirm-h4's tuned shb-hand
		task_args h4
		SEEDS=10 PEERS=1 parity seeds-h4-peers parity/confirm-h4 --methods schedule-free-adamw,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs confirm-h4)"
		;;
	keep-* | backoff-* | cuts-* | val-*) # one change of salsa-probe over ten seeds from STARTS (default 0.01), beside the tuned shb-hand
		# runs of the task's current ten-seed directory (the scoreboard's): keep-TASK probe_keep_rate=1 (docs/parity/keep-rate.md),
		# backoff-TASK probe_backoff=4 (backoff.md), cuts-TASK decay_cuts=1 (cuts.md), val-TASK probe_val=1 (after H35–H39)
		c=${part%%-*} t=${part#*-} d=$(current_name "$t")
		case $c in keep) key=probe_keep_rate=1 ;; backoff) key=probe_backoff=4 ;; cuts) key=decay_cuts=1 ;; val) key=probe_val=1 ;; esac
		task_args $t
		starts=${STARTS:-0.01} SEEDS=10 parity $c-$t parity/$d --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $d)" --set $key
		;;
	built-*) # the built salsa-probe (its average, commit f55e0ce) over ten seeds from every lr0, alone: the scoreboard's cells
		# (docs/parity/average.md, the sixth screen, ran this into runs/build/s6-TASK; LR0S narrows the lr0)
		t=${part#built-}
		task_args $t
		./bin/salsa compare --methods salsa-probe "${args[@]}" --lr0s "${LR0S:-$starts}" --seeds 10 ${JOBS:+--jobs "$JOBS"} --no-plots --out runs/parity/built-$t | tail -1
		;;
	default-*) # the default salsa over ten seeds from every lr0 (after H35–H39, which ran it on three), beside the tuned shb-hand
		# runs of the task's current ten-seed directory
		t=${part#default-} d=$(current_name "$t")
		task_args $t
		SEEDS=10 parity default-$t parity/$d --methods salsa,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs $d)"
		;;
	rebuild-*) # the task's ten-seed salsa-probe and shb-hand grid trained again with the current build, into rebuild-TASK
		# (H31, whose batch of 12 rounds differently since commit cbdbba9)
		t=${part#rebuild-} d=$(current_name "$t")
		task_args $t
		# LRS: the grid, where the ten-seed directory is not in this checkout (H31's was 30,100,300)
		SEEDS=10 parity rebuild-$t - --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "${LRS:-$(tuned_lrs $d)}"
		;;
	seeds-*)
		# seeds 1–10 (SEEDS=10) where salsa-probe misses the bar, and where it passes (the logreg and mlp tasks, the lstm, the cnn nearest the bar):
		# is the 3-seed median gap larger than the seeds' spread?
		t=${part#seeds-} s=${SEEDS:-10}
		# the eleventh to twenty-first sets' seeds 1-3 are their three-seed runs, the same runs bit for bit: copied, not trained again
		set=
		# H45–H104: heldoutN.md with N = (number + 10) / 5 (H45–H49 the eleventh, …, H100–H104 the twenty-second)
		if [[ $t =~ ^h([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 45 && BASH_REMATCH[1] <= 104)); then
			set=heldout$(((BASH_REMATCH[1] + 10) / 5))
		fi
		# the grid around each task's earlier pick: for those sets, the three-seed pick and its neighbours
		# on the 1-3-10 sequence (around); before them, written out
		# LRS: the grid, where the set's three-seed directory is not in this checkout (runs/ is not in git):
		# the three-seed pick of its heldoutN.md and its neighbours
		if [ -n "${LRS:-}" ]; then
			lrs=$LRS
		elif [ -n "$set" ]; then
			lrs=$(around "$(tuned_lr runs/parity/$set-$t)") || { echo "$part: no three-seed pick in runs/parity/$set-$t (set LRS)" >&2; exit 2; }
		else
			case $t in
			mlp | cnn | h5 | h14 | h17 | h18 | h24 | h25) lrs=0.3,1,3 ;;
			lstm | h8 | h10 | h13 | h19 | h22 | h26 | h27 | h30 | h31 | h35 | h36) lrs=30,100,300 ;;
			logreg | logreg-wd0 | h1 | h16) lrs=0.03,0.1,0.3 ;;
			h2 | h3 | h6 | h7 | h9 | h11 | h12 | h15 | h21 | h23 | h28 | h29 | h32 | h33 | h34 | h38 | h39 | resnet20) lrs=0.1,0.3,1 ;;
			h37) lrs=0.03,0.1,0.3 ;;
			h20) lrs=0.01,0.03,0.1 ;;
			# heldout10.md, around the three-seed picks
			h40 | h41) lrs=30,100,300 ;;
			h42) lrs=0.3,1,3 ;;
			h43) lrs=0.1,0.3,1 ;;
			h44) lrs=0.03,0.1,0.3 ;;
			*) echo "unknown part $part" >&2; exit 2 ;;
			esac
		fi
		task_args $t
		if [ -n "$set" ] && [ -d runs/parity/$set-$t ]; then
			from=runs/parity/$set-$t/runs
			# H89's salsa-probe runs are trained again: the guard, which went into salsa-probe after its set was run,
			# acts there, and the runs with it were trained with --set warmup_guard=1, which salsa-probe now refuses
			[ -d runs/parity/$set-guard-$t ] || copy_new runs/parity/seeds-$t "$from"/salsa-probe-*
			for lr in ${lrs//,/ }; do copy_new runs/parity/seeds-$t "$from"/shb-hand-lr$lr-s*; done
			copy_new runs/parity/seeds-$t-peers runs/parity/$set-$t-peers/runs/schedule-free-adamw-*
		fi
		SEEDS=$s widened seeds-$t $lrs --methods salsa-probe,shb-hand "${args[@]}"
		SEEDS=$s PEERS=1 parity seeds-$t-peers parity/seeds-$t --methods schedule-free-adamw,shb-hand "${args[@]}" --grid shb-hand --lr0s "$(tuned_lrs seeds-$t)"
		;;
	wide) # after the runs: the grids whose tuned lr was their top, one step wider (the lstm, three)
		PEERS=1 parity fashion-mnist-cnn-wide compare/fashion-mnist-cnn --methods shb-hand "${cnn[@]}" --grid shb-hand --lr0s 0.1,0.3,1,3
		PEERS=1 parity heldout-h4-wide parity/heldout-h4 --methods shb-hand "${h4[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1,3
		PEERS=1 parity tinyshakespeare-lstm-wide compare/tinyshakespeare-lstm --methods shb-hand "${lstm[@]}" --grid shb-hand --lr0s 0.3,1,3,10,30,100
		;;
	heldout | heldout-peers | probe-heldout) # docs/parity/heldout.md, written before any tuning
		grid=(--grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1)
		for h in 1 2 3 4; do
			task_args h$h
			if [ "$part" = heldout ]; then
				parity heldout-h$h - --methods salsa,salsa-budget,shb-hand "${args[@]}" "${grid[@]}"
			elif [ "$part" = probe-heldout ]; then
				parity heldout-h$h-$sfx parity/heldout-h$h --methods salsa-budget,shb-hand "${probe[@]}" "${args[@]}" "${grid[@]}"
			else # the untuned peers beside the same tuned shb-hand runs
				PEERS=1 parity heldout-h$h-peers parity/heldout-h$h --methods $peers,shb-hand "${args[@]}" "${grid[@]}"
			fi
		done
		;;
	guard-h64 | guard-h84) # the scoreboard's directory of H64 and H84 since the guard went into salsa-probe: the shb-hand runs
		# of seeds-TASK and the salsa-probe runs trained with --set warmup_guard=1 (runs/guard/TASK, docs/parity/guard.md step 2), linked
		t=${part#guard-}
		link_runs runs/parity/guard-$t runs/parity/seeds-$t/runs/shb-hand-* runs/guard/$t/runs/salsa-probe-*
		;;
	cap-*) # the scoreboard's directory of TASK since probe_norm_cap joined salsa-probe (c6f481a)
		t=${part#cap-}
		if [[ " ${cap_screened[*]} " == *" $t "* ]]; then
			# the nine tasks of its screens: the shb-hand runs of seeds-TASK and the runs of its fifth version
			# (runs/norm5/TASK, docs/parity/norm.md), linked
			link_runs runs/parity/cap-$t runs/parity/seeds-$t/runs/shb-hand-* runs/norm5/$t/runs/salsa-probe-*
		else
			# elsewhere its ten seeds from every lr0 trained again with the build, beside shb-hand at LRS (the scoreboard's
			# tuned lr and one neighbour); so were the issue's lstm, H31 and H8 (30,100), H46 and H61 (10,30), H66 (30,100),
			# H22 (100,300) and H65 (30,100)
			task_args $t
			SEEDS=10 parity cap-$t - --methods salsa-probe,shb-hand "${args[@]}" --grid shb-hand --lr0s "${LRS:?cap-$t: give LRS, the rates of shb-hand}"
		fi
		;;
	scoreboard) # docs/parity/README.md's "Where it stands": every task with ten-seed runs of the current salsa-probe
		# (clean-/confirm- where those reruns replaced seeds-; H27's ran on a device machine; built_dir where they were
		# trained with the cap), beside Schedule-Free AdamW
		sb=()
		for t in logreg logreg-wd0 mlp cnn lstm resnet20 h{1..99}; do
			d=$(built_dir "$t") p=runs/parity/seeds-$t-peers
			[ "$t" = h27 ] && p=runs/parity/seeds-h27-sf
			[ -d "$d" ] || { echo "scoreboard: $t: no $d" >&2; continue; }
			[ -d "$p" ] || p=
			sb+=("$(echo "$t" | tr h H)=$d${p:+,$p}")
		done
		SCOREBOARD=1 bash scripts/parity-summary.sh "${sb[@]}"
		;;
	*) echo "unknown part $part" >&2; exit 2 ;;
	esac
done
