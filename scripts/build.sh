# Sourced by the scripts that run bin/salsa. build_salsa builds bin/salsa from
# the working tree with the toolchain and the flag the fast kernels need (see
# the README), unless NOBUILD is set and bin/salsa is already there.
build_salsa() {
	if [ -n "${NOBUILD:-}" ] && [ -x bin/salsa ]; then
		return
	fi
	mkdir -p bin
	(cd gomlx && GOTOOLCHAIN=go1.27.0 GOEXPERIMENT=simd go build -o ../bin/salsa ./cmd/salsa)
}
