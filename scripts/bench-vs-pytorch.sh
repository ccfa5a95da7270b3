#!/usr/bin/env bash
# Side-by-side step times: salsa bench (GoMLX engine: plain, SASA+ and SSLS
# steps) and the same models in PyTorch 1.13 CPU (scripts/torch_bench.py, best
# of 1 and 2 threads), model after model in one run, so that the ratios
# compare like with like on a shared machine. PyTorch is only a yardstick:
#   apt-get install -y python3-torch libopenblas0-openmp
# (without OpenBLAS, Debian's PyTorch uses the reference BLAS and is ~25× slower).
# Usage: bash scripts/bench-vs-pytorch.sh [MODEL ...]   (default: mlp cnn resnet20 lstm)
set -euo pipefail
cd "$(dirname "$0")/.."
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp cnn resnet20 lstm)
mkdir -p bin
source scripts/build.sh
build_salsa
# salsa bench per model (its plain, SASA+ and SSLS steps interleaved round by
# round), then PyTorch on all the models at once (its rounds interleaved across
# models and thread counts; the first rounds of a fresh process run slow).
for m in "${models[@]}"; do
	case $m in
	mlp) ds=fashion-mnist; s=(--steps 40 --rounds 5) ;;
	cnn) ds=fashion-mnist; s=(--steps 10 --rounds 5) ;;
	resnet20) ds=fashion-mnist; s=(--steps 3 --rounds 3) ;;
	lstm) ds=tinyshakespeare; s=(--steps 4 --rounds 3) ;;
	resnet18) ds=cifar10-synthetic; s=(--steps 1 --rounds 1 --batch 16) ;;
	lstm-paper) ds=wikitext2; s=(--steps 1 --rounds 1 --batch 4) ;;
	*) echo "unknown model $m" >&2; exit 2 ;;
	esac
	./bin/salsa bench --dataset "$ds" --model "$m" "${s[@]}" | grep '^bench:'
done
t=(--steps 6 --rounds 5 --warmup 3)
case " ${models[*]} " in *" resnet18 "* | *" lstm-paper "*) t=(--steps 1 --rounds 1 --warmup 1 --batch 16) ;; esac
IFS=,; PYTHONUNBUFFERED=1 /usr/bin/python3 scripts/torch_bench.py --models "${models[*]}" --threads 1,2 "${t[@]}" | grep '^bench: '
