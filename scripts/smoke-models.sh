#!/usr/bin/env bash
# Trains every model for 20 steps (one epoch of a --limit'ed training set) from
# the command line and prints each run's final: line. Data: ../shared/data
# beside the repository (or $SALSA_DATA); cifar10-synthetic needs no files.
# Usage: bash scripts/smoke-models.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/smoke}
mkdir -p bin "$out"
source scripts/build.sh
build_salsa
run() { # name, then salsa train flags
	local name=$1; shift
	rm -rf "$out/$name"
	printf '%-28s ' "$name"
	./bin/salsa train --epochs 1 --no-plots --out "$out/$name" "$@" 2>"$out/$name.log" | grep '^final:'
}
run mlp-fashion        --dataset fashion-mnist --model mlp --limit 2560
run cnn-fashion        --dataset fashion-mnist --model cnn --limit 2560
run resnet20-fashion   --dataset fashion-mnist --model resnet20 --limit 2560
run resnet18-cifar-syn --dataset cifar10-synthetic --model resnet18 --batch 32 --limit 640
run lstm-shakespeare   --dataset tinyshakespeare --model lstm --limit $((32 * (20 * 64 + 1)))
run lstm-paper-shakesp --dataset tinyshakespeare --model lstm-paper --limit $((20 * (20 * 35 + 1)))
