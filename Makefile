# The core (module github.com/salsaopt/salsa) builds with any Go >= 1.24.
# The GoMLX adapter and the CLI (module ./gomlx) need Go 1.27 with the simd
# experiment; the go command fetches that toolchain through the module proxy.
GOMLX_ENV := GOTOOLCHAIN=go1.27.0 GOEXPERIMENT=simd
GO_CORE := GOTOOLCHAIN=$(or $(CORE_TOOLCHAIN),auto) go

.PHONY: mnist test check core-test gomlx-test fmt

## mnist: the main job: MNIST logistic regression trained by SALSA, offline,
## from the copy of MNIST in data/mnist; outputs and figures in runs/mnist-salsa.
mnist:
	@if [ -d runs/mnist-salsa ]; then echo "make mnist: replacing the previous run in runs/mnist-salsa"; rm -rf runs/mnist-salsa; fi
	cd gomlx && $(GOMLX_ENV) go run ./cmd/salsa train --dataset mnist --model logreg --method salsa --out ../runs/mnist-salsa $(ARGS)

## test: everything CI runs: formatting, vet, and the tests of both modules.
test: check core-test gomlx-test

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO_CORE) vet ./...
	cd gomlx && $(GOMLX_ENV) go vet ./...

core-test:
	$(GO_CORE) test -count=1 ./...

gomlx-test:
	cd gomlx && $(GOMLX_ENV) go test -count=1 ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
