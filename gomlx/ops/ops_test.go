package ops

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

var testBackend = sync.OnceValue(func() compute.Backend { return gobackend.GetBackend() })

// run executes fn on float64 inputs of the given dimensions and returns its
// outputs as flat float64 slices.
func run(t *testing.T, fn func(in []*Node) []*Node, data [][]float64, dims [][]int) [][]float64 {
	t.Helper()
	exec, err := NewExec(testBackend(), fn)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(data))
	for i := range data {
		args[i] = tensors.FromFlatDataAndDimensions(data[i], dims[i]...)
	}
	outs, err := exec.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		res[i] = tensors.MustCopyFlatData[float64](o)
	}
	return res
}

func randSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*r.Float64() - 1
	}
	return s
}

func prod(d []int) int {
	p := 1
	for _, v := range d {
		p *= v
	}
	return p
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// fdGrad is the central finite-difference gradient of f at x.
func fdGrad(x []float64, f func([]float64) float64) []float64 {
	const h = 1e-5
	g := make([]float64, len(x))
	xx := append([]float64(nil), x...)
	for i := range x {
		xx[i] = x[i] + h
		fp := f(xx)
		xx[i] = x[i] - h
		fm := f(xx)
		xx[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Fatalf("%s[%d] = %.10g, want %.10g (|diff| %.3g)", what, i, got[i], want[i], d)
		}
	}
}
