#!/usr/bin/env bash
# Reproduces the README's MNIST results table: 30 epochs, 3 seeds, SALSA
# from three initial rates and the hand-tuned schedule.
#   bash scripts/mnist-results.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/mnist-results}
source scripts/build.sh
build_salsa
mkdir -p "$out"
runs=()
for seed in 1 2 3; do
  for lr in 0.001 0.01 0.1; do runs+=("salsa-lr$lr-s$seed|--method salsa --lr0 $lr --seed $seed"); done
  runs+=("shb-hand-s$seed|--method shb-hand --lr0 0.3 --drops 10,20 --seed $seed")
done
for r in "${runs[@]}"; do
  name=${r%%|*}; args=${r#*|}
  [ -f "$out/$name/epochs.csv" ] && grep -q '^30,' "$out/$name/epochs.csv" && continue
  rm -rf "${out:?}/$name"
  ./bin/salsa train --epochs 30 --out "$out/$name" --label "$name" $args > "$out/$name.final" 2> "$out/$name.log"
done
printf '| run | test acc | test loss | final lr | drops | switch step | seconds |\n|---|---|---|---|---|---|---|\n'
for r in "${runs[@]}"; do
  name=${r%%|*}
  f=$(cat "$out/$name.final")
  acc=$(sed -E 's/.*test_acc=([^ ]+).*/\1/' <<<"$f"); loss=$(sed -E 's/.*test_loss=([^ ]+).*/\1/' <<<"$f")
  lr=$(sed -E 's/.* lr=([^ ]+).*/\1/' <<<"$f"); sec=$(sed -E 's/.*seconds=([^ ]+).*/\1/' <<<"$f")
  drops=$(grep -c ',drop,' "$out/$name/events.csv" || true)
  sw=$(grep ',switch,' "$out/$name/events.csv" | cut -d, -f1,3 | tr ',' ' ' || true)
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$acc" "$loss" "$lr" "$drops" "${sw:-—}" "$sec"
done
