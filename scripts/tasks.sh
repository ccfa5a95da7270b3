# The tasks of issue 9's measurements (docs/parity): their salsa compare
# arguments, without the shb-hand grid except where named, and task_args.
# Sourced by scripts/parity.sh, walltime.sh, probe-val.sh and keep-rate.sh.
# MNIST logreg (issue 8's), without its grid, and with it
logregtask=(--dataset mnist --model logreg --epochs 30 --jobs 1)
logreg=("${logregtask[@]}" --grid shb-hand --lr0s 0.01,0.03,0.1,0.3,1)
# the mlp task (issue 8's), without its grid, and with it
mlptask=(--dataset mnist --model mlp --limit 7680 --epochs 20)
mlp=("${mlptask[@]}" --grid shb-hand --lr0s 0.01,0.1,1)
# the deep tasks (issue 8's comparison tasks) and held-out H4, without their grids
cnn=(--dataset fashion-mnist --model cnn --limit 1920 --test-limit 2000 --epochs 20)
lstm=(--dataset tinyshakespeare --model lstm --limit 25000 --test-limit 10000 --epochs 20)
resnet20=(--dataset fashion-mnist --model resnet20 --limit 640 --test-limit 500 --epochs 20)
h4=(--dataset fashion-mnist --model cnn --batch 64 --set wd=0 --epochs 12 --limit 1920 --test-limit 2000)
# held-out H1–H3 (heldout.md), H5–H8 (heldout2.md), H9–H12 (heldout3.md) and
# H13–H16 (heldout4.md), without their grids: their parts, settle and settle2 use them
h1=(--dataset fashion-mnist --model logreg --batch 32 --set wd=1e-3 --epochs 10 --jobs 1)
h2=(--dataset fashion-mnist --model logreg --batch 512 --set wd=0 --epochs 40 --jobs 1)
h3=(--dataset mnist --model mlp --batch 64 --set wd=5e-4 --epochs 8 --limit 20000)
h5=(--dataset mnist --model cnn --batch 128 --set wd=5e-4 --epochs 10 --limit 3840 --test-limit 2000)
h6=(--dataset fashion-mnist --model mlp --batch 256 --set wd=1e-4 --epochs 15 --limit 15360)
h7=(--dataset mnist --model logreg --batch 64 --set wd=1e-3 --epochs 5 --jobs 1)
h8=(--dataset tinyshakespeare --model lstm --batch 16 --epochs 10 --limit 20000 --test-limit 10000)
h9=(--dataset fashion-mnist --model cnn --batch 32 --set wd=1e-4 --epochs 6 --limit 1920 --test-limit 2000)
h10=(--dataset tinyshakespeare --model lstm --batch 64 --set wd=1e-5 --epochs 15 --limit 30000 --test-limit 10000)
h11=(--dataset mnist --model mlp --batch 32 --set wd=0 --epochs 5 --limit 10000)
h12=(--dataset fashion-mnist --model logreg --batch 256 --set wd=5e-4 --epochs 20 --jobs 1)
h13=(--dataset tinyshakespeare --model lstm --batch 32 --epochs 10 --limit 30000 --test-limit 10000)
h14=(--dataset mnist --model cnn --batch 64 --set wd=1e-4 --epochs 4 --limit 1920 --test-limit 2000)
h15=(--dataset fashion-mnist --model mlp --batch 128 --set wd=5e-4 --epochs 10 --limit 5000)
h16=(--dataset mnist --model logreg --batch 32 --set wd=0 --epochs 3 --jobs 1)
# H17–H20 (heldout5.md)
h17=(--dataset fashion-mnist --model cnn --batch 32 --set wd=5e-4 --epochs 4 --limit 2880 --test-limit 2000)
h18=(--dataset mnist --model mlp --batch 256 --set wd=1e-3 --epochs 12 --limit 15000)
h19=(--dataset tinyshakespeare --model lstm --batch 24 --set wd=1e-4 --epochs 12 --limit 25000 --test-limit 10000)
h20=(--dataset fashion-mnist --model logreg --batch 16 --set wd=5e-4 --epochs 2 --jobs 1)
# H21–H24 (heldout6.md)
h21=(--dataset mnist --model cnn --batch 16 --set wd=1e-3 --epochs 3 --limit 2400 --test-limit 2000)
h22=(--dataset tinyshakespeare --model lstm --batch 48 --set wd=5e-5 --epochs 8 --limit 20000 --test-limit 10000)
h23=(--dataset fashion-mnist --model mlp --batch 64 --set wd=1e-3 --epochs 6 --limit 12000)
h24=(--dataset mnist --model logreg --batch 1024 --set wd=1e-3 --epochs 15 --jobs 1)
# H25–H29 (heldout7.md)
h25=(--dataset fashion-mnist --model cnn --batch 24 --set wd=1e-3 --epochs 5 --limit 2400 --test-limit 2000)
h26=(--dataset tinyshakespeare --model lstm --batch 40 --set wd=3e-5 --epochs 16 --limit 28000 --test-limit 10000)
h27=(--dataset tinyshakespeare --model lstm --batch 32 --set wd=2e-4 --epochs 15 --limit 35000 --test-limit 10000)
h28=(--dataset mnist --model mlp --batch 96 --set wd=5e-5 --epochs 10 --limit 9000)
h29=(--dataset fashion-mnist --model logreg --batch 128 --set wd=5e-5 --epochs 8 --jobs 1)
# H30–H34 (heldout8.md), written before the change they are for was made
h30=(--dataset tinyshakespeare --model lstm --batch 20 --set wd=5e-4 --epochs 6 --limit 40000 --test-limit 10000)
h31=(--dataset tinyshakespeare --model lstm --batch 12 --set wd=0 --epochs 14 --limit 15000 --test-limit 10000)
h32=(--dataset mnist --model cnn --batch 48 --set wd=2e-4 --epochs 7 --limit 3000 --test-limit 2000)
h33=(--dataset fashion-mnist --model mlp --batch 48 --set wd=2e-5 --epochs 7 --limit 8000)
h34=(--dataset mnist --model logreg --batch 192 --set wd=2e-4 --epochs 12 --jobs 1)
# H35–H39 (heldout9.md), written before the change they were for; run without one
h35=(--dataset tinyshakespeare --model lstm --batch 28 --set wd=0 --epochs 12 --limit 22000 --test-limit 10000)
h36=(--dataset tinyshakespeare --model lstm --batch 36 --set wd=3e-4 --epochs 9 --limit 32000 --test-limit 10000)
h37=(--dataset fashion-mnist --model cnn --batch 40 --set wd=3e-4 --epochs 6 --limit 2400 --test-limit 2000)
h38=(--dataset mnist --model mlp --batch 80 --set wd=0 --epochs 10 --limit 6000)
h39=(--dataset fashion-mnist --model logreg --batch 96 --set wd=3e-4 --epochs 8 --jobs 1)
# H40–H44 (heldout10.md), written before the averaging screen (average.md)
h40=(--dataset tinyshakespeare --model lstm --batch 44 --set wd=0 --epochs 11 --limit 26000 --test-limit 10000)
h41=(--dataset tinyshakespeare --model lstm --batch 26 --set wd=2e-5 --epochs 10 --limit 36000 --test-limit 10000)
h42=(--dataset mnist --model cnn --batch 56 --set wd=1e-4 --epochs 5 --limit 2880 --test-limit 2000)
h43=(--dataset fashion-mnist --model mlp --batch 160 --set wd=0 --epochs 9 --limit 10000)
h44=(--dataset mnist --model logreg --batch 48 --set wd=1e-4 --epochs 6 --jobs 1)
# H45–H49 (heldout11.md), written before they were run, to be run without a change
h45=(--dataset tinyshakespeare --model lstm --batch 30 --set wd=1e-3 --epochs 7 --limit 24000 --test-limit 10000)
h46=(--dataset tinyshakespeare --model lstm --batch 18 --set wd=0 --epochs 13 --limit 33000 --test-limit 10000)
h47=(--dataset fashion-mnist --model cnn --batch 72 --set wd=0 --epochs 8 --limit 3360 --test-limit 2000)
h48=(--dataset mnist --model mlp --batch 112 --set wd=3e-4 --epochs 6 --limit 11000)
h49=(--dataset fashion-mnist --model logreg --batch 640 --set wd=1e-5 --epochs 25 --jobs 1)
# H50–H54 (heldout12.md), written before any run of probe_level_copy (climb.md)
h50=(--dataset tinyshakespeare --model lstm --batch 22 --set wd=0 --epochs 12 --limit 28000 --test-limit 10000)
h51=(--dataset tinyshakespeare --model lstm --batch 34 --set wd=1e-4 --epochs 10 --limit 30000 --test-limit 10000)
h52=(--dataset mnist --model cnn --batch 80 --set wd=5e-4 --epochs 6 --limit 3000 --test-limit 2000)
h53=(--dataset fashion-mnist --model mlp --batch 72 --set wd=1e-4 --epochs 8 --limit 9000)
h54=(--dataset mnist --model logreg --batch 320 --set wd=2e-5 --epochs 12 --jobs 1)
# H55–H59 (heldout13.md), written before any result of H50–H54 was seen, for a later change
h55=(--dataset tinyshakespeare --model lstm --batch 16 --set wd=5e-5 --epochs 11 --limit 32000 --test-limit 10000)
h56=(--dataset tinyshakespeare --model lstm --batch 40 --set wd=0 --epochs 9 --limit 38000 --test-limit 10000)
h57=(--dataset fashion-mnist --model cnn --batch 64 --set wd=2e-4 --epochs 7 --limit 3200 --test-limit 2000)
h58=(--dataset mnist --model mlp --batch 96 --set wd=0 --epochs 7 --limit 12000)
h59=(--dataset fashion-mnist --model logreg --batch 200 --set wd=3e-5 --epochs 10 --jobs 1)
# H60–H64 (heldout14.md), written before any result of H55–H59 was seen, for a later change
h60=(--dataset tinyshakespeare --model lstm --batch 50 --set wd=2e-5 --epochs 8 --limit 42000 --test-limit 10000)
h61=(--dataset tinyshakespeare --model lstm --batch 14 --set wd=0 --epochs 10 --limit 24000 --test-limit 10000)
h62=(--dataset mnist --model cnn --batch 40 --set wd=1e-3 --epochs 5 --limit 2600 --test-limit 2000)
h63=(--dataset fashion-mnist --model mlp --batch 120 --set wd=5e-5 --epochs 12 --limit 7000)
h64=(--dataset mnist --model logreg --batch 24 --set wd=5e-4 --epochs 4 --jobs 1)
# H65–H69 (heldout15.md), written before any result of H60–H64 was seen, for a later change
h65=(--dataset tinyshakespeare --model lstm --batch 36 --set wd=3e-4 --epochs 7 --limit 28000 --test-limit 10000)
h66=(--dataset tinyshakespeare --model lstm --batch 22 --set wd=0 --epochs 16 --limit 18000 --test-limit 10000)
h67=(--dataset fashion-mnist --model cnn --batch 48 --set wd=0 --epochs 8 --limit 2400 --test-limit 2000)
h68=(--dataset mnist --model mlp --batch 160 --set wd=2e-4 --epochs 9 --limit 16000)
h69=(--dataset fashion-mnist --model logreg --batch 48 --set wd=1e-4 --epochs 6 --jobs 1)
# H70–H74 (heldout16.md), written before any result of H65–H69 was seen, for a later change
h70=(--dataset tinyshakespeare --model lstm --batch 60 --set wd=1e-4 --epochs 6 --limit 45000 --test-limit 10000)
h71=(--dataset tinyshakespeare --model lstm --batch 26 --set wd=0 --epochs 15 --limit 21000 --test-limit 10000)
h72=(--dataset mnist --model cnn --batch 64 --set wd=3e-4 --epochs 6 --limit 3000 --test-limit 2000)
h73=(--dataset fashion-mnist --model mlp --batch 72 --set wd=0 --epochs 10 --limit 10000)
h74=(--dataset mnist --model logreg --batch 96 --set wd=2e-4 --epochs 3 --jobs 1)
# H75–H79 (heldout17.md), written before any result of H70–H74 was seen, for a later change
h75=(--dataset tinyshakespeare --model lstm --batch 10 --set wd=1e-5 --epochs 8 --limit 19000 --test-limit 10000)
h76=(--dataset tinyshakespeare --model lstm --batch 42 --set wd=2e-4 --epochs 12 --limit 34000 --test-limit 10000)
h77=(--dataset fashion-mnist --model cnn --batch 96 --set wd=1e-4 --epochs 9 --limit 3600 --test-limit 2000)
h78=(--dataset mnist --model mlp --batch 40 --set wd=1e-3 --epochs 4 --limit 8000)
h79=(--dataset fashion-mnist --model logreg --batch 768 --set wd=0 --epochs 30 --jobs 1)
# H80–H84 (heldout18.md), written before any result of H75–H79 was seen, for a later change
h80=(--dataset tinyshakespeare --model lstm --batch 20 --set wd=5e-5 --epochs 5 --limit 40000 --test-limit 10000)
h81=(--dataset tinyshakespeare --model lstm --batch 56 --set wd=0 --epochs 14 --limit 30000 --test-limit 10000)
h82=(--dataset mnist --model cnn --batch 32 --set wd=0 --epochs 5 --limit 2200 --test-limit 2000)
h83=(--dataset fashion-mnist --model mlp --batch 200 --set wd=3e-4 --epochs 15 --limit 12000)
h84=(--dataset mnist --model logreg --batch 16 --set wd=5e-5 --epochs 2 --jobs 1)
# H85–H89 (heldout19.md), written after H80–H84 were run and before any change was designed on them, for a later change
h85=(--dataset tinyshakespeare --model lstm --batch 16 --set wd=1e-4 --epochs 6 --limit 26000 --test-limit 10000)
h86=(--dataset tinyshakespeare --model lstm --batch 30 --set wd=1e-5 --epochs 18 --limit 16000 --test-limit 10000)
h87=(--dataset fashion-mnist --model cnn --batch 24 --set wd=5e-5 --epochs 6 --limit 2000 --test-limit 2000)
h88=(--dataset mnist --model mlp --batch 24 --set wd=5e-4 --epochs 3 --limit 6000)
h89=(--dataset fashion-mnist --model logreg --batch 12 --set wd=1e-4 --epochs 2 --jobs 1)
# H90–H94 (heldout20.md), written after the guard went into salsa-probe and before any run of them
h90=(--dataset tinyshakespeare --model lstm --batch 36 --set wd=3e-5 --epochs 10 --limit 40000 --test-limit 10000)
h91=(--dataset tinyshakespeare --model lstm --batch 10 --set wd=0 --epochs 17 --limit 17000 --test-limit 10000)
h92=(--dataset mnist --model cnn --batch 20 --set wd=1e-4 --epochs 4 --limit 2400 --test-limit 2000)
h93=(--dataset fashion-mnist --model mlp --batch 16 --set wd=2e-4 --epochs 4 --limit 7000)
h94=(--dataset mnist --model logreg --batch 20 --set wd=3e-4 --epochs 3 --jobs 1)
# H95–H99 (heldout21.md), written after every held-out task had ten seeds and before any change was designed on them
h95=(--dataset tinyshakespeare --model lstm --batch 48 --set wd=0 --epochs 20 --limit 12000 --test-limit 10000)
h96=(--dataset tinyshakespeare --model lstm --batch 64 --set wd=4e-4 --epochs 10 --limit 48000 --test-limit 10000)
h97=(--dataset mnist --model cnn --batch 24 --set wd=5e-4 --epochs 8 --limit 3400 --test-limit 2000)
h98=(--dataset fashion-mnist --model mlp --batch 32 --set wd=0 --epochs 12 --limit 16000)
h99=(--dataset mnist --model logreg --batch 8 --set wd=1e-4 --epochs 1 --jobs 1)
# H100–H104 (heldout22.md), written while probe_keep_rate's next step ran, before any result of it and any run of them
h100=(--dataset tinyshakespeare --model lstm --batch 28 --set wd=2e-4 --epochs 8 --limit 36000 --test-limit 10000)
h101=(--dataset tinyshakespeare --model lstm --batch 16 --set wd=0 --epochs 12 --limit 14000 --test-limit 10000)
h102=(--dataset fashion-mnist --model cnn --batch 28 --set wd=3e-4 --epochs 6 --limit 2600 --test-limit 2000)
h103=(--dataset mnist --model mlp --batch 56 --set wd=1e-4 --epochs 9 --limit 14000)
h104=(--dataset fashion-mnist --model logreg --batch 64 --set wd=2e-4 --epochs 5 --jobs 1)

# task_args TASK: sets args to the compare arguments of TASK: mlp, cnn,
# lstm, logreg, logreg-wd0, or a held-out task, whose arguments are the
# array named after it (h1…h104).
task_args() {
	case $1 in
	mlp) args=("${mlptask[@]}") ;;
	cnn) args=("${cnn[@]}") ;;
	lstm) args=("${lstm[@]}") ;;
	logreg) args=("${logregtask[@]}") ;;
	logreg-wd0) args=("${logregtask[@]}" --set wd=0) ;;
	*)
		local -n task=$1
		args=("${task[@]}")
		;;
	esac
}

# current_dir TASK: the directory of runs/parity holding the ten-seed runs of
# the current salsa-probe on TASK (clean-/confirm- where those reruns
# replaced seeds-; H27's ran on a device machine)
current_dir() {
	case $1 in
	h5 | h10 | h11 | h13) echo runs/parity/clean-$1 ;;
	h4 | h9 | h14 | h17) echo runs/parity/confirm-$1 ;;
	h27) echo runs/parity/seeds-h27-device ;;
	h64 | h84) echo runs/parity/guard-$1 ;; # with the guard (parity.sh guard-h64, guard-h84)
	*) echo runs/parity/seeds-$1 ;;
	esac
}

# cap_screened: the nine tasks of probe_norm_cap's screens (docs/parity/norm.md),
# whose cap-TASK directories parity.sh links from the runs of its fifth version
cap_screened=(h75 h77 h79 h80 h81 h82 h85 h86 h91)

# built_dir TASK: the directory of runs/parity holding the ten-seed runs of
# salsa-probe as built since probe_norm_cap joined it, where they were
# trained with the cap: cap-TASK for the nine tasks of its screens (linked)
# and for the lstm, H31, H8, H46, H61, H66, H22 and H65 (trained
# again with the build: parity.sh cap-TASK; runs/chain21.sh to
# runs/chain28.sh), seeds-TASK-cap for H95–H97; current_dir elsewhere (the
# build before the cap)
built_dir() {
	case " ${cap_screened[*]} lstm h31 h8 h46 h61 h66 h22 h65 " in
	*" $1 "*) echo runs/parity/cap-$1 ;;
	*)
		case $1 in
		h95 | h96 | h97) echo runs/parity/seeds-$1-cap ;;
		*) current_dir "$1" ;;
		esac
		;;
	esac
}

# tuned_lr DIR: the lr of the shb-hand row picked on validation in DIR's
# runs (parity-summary.sh EPOCHS=1, which needs no checkpoint)
tuned_lr() {
	EPOCHS=1 bash scripts/parity-summary.sh "$1" 2>/dev/null | grep "(tuned)" | head -1 | awk -F'|' '{print $3}' | sed 's/ *shb-hand-lr//; s/ (tuned) *//'
}

# scoreboard_row TASK: TASK's row of the ten-seed scoreboard of docs/parity/README.md
# ("| H46 | 10.163 at lr 30 | …"; TASK as task_args names it, h46 for H46); empty if it has none
scoreboard_row() {
	local name=$1
	[[ $name == h[0-9]* ]] && name=H${name#h}
	awk -F'|' -v n="$name" '$2 ~ "^ *" n " *$" && $3 ~ /^ *[0-9.]+%? at lr [0-9.e+-]+/ { print; exit }' docs/parity/README.md
}

# scoreboard_ref TASK: the tuned shb-hand's ten-seed median on the scoreboard,
# a fraction for accuracy ("76.50%" gives 0.7650)
scoreboard_ref() {
	scoreboard_row "$1" | awk -F'|' '{ split($3, a, " "); v = a[1]
		if (v ~ /%$/) { sub(/%$/, "", v); v = v / 100 }
		print v }'
}

# scoreboard_lr TASK: the lr of TASK's tuned shb-hand on the scoreboard, from
# its ten-seed runs
scoreboard_lr() {
	scoreboard_row "$1" | awk -F'|' '{ split($3, a, " at lr "); split(a[2], b, " "); print b[1] }'
}

# scoreboard_cell TASK LR0: salsa-probe's cell on the scoreboard from LR0
# (0.001, 0.01 or 0.1), as printed there without its marks ("+3.27 pp", "−23.00%")
scoreboard_cell() {
	local i
	case $2 in 0.001) i=1 ;; 0.01) i=2 ;; 0.1) i=3 ;; *) return ;; esac
	scoreboard_row "$1" | awk -F'|' -v i=$i '{ split($4, c, " / "); v = c[i]
		gsub(/\*|ᶜ|ᵍ/, "", v); gsub(/^ +| +$/, "", v); print v }'
}
