//go:build !goexperiment.simd

package cli

const simdBuild = false
