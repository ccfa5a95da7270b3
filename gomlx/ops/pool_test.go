package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
)

func naiveMaxPool2(x []float64, d []int) ([]float64, []int) {
	n, h, w, c := d[0], d[1], d[2], d[3]
	y := make([]float64, n*(h/2)*(w/2)*c)
	for b := range n {
		for i := range h / 2 {
			for j := range w / 2 {
				for ch := range c {
					m := math.Inf(-1)
					for a := range 2 {
						for bb := range 2 {
							m = math.Max(m, x[((b*h+2*i+a)*w+2*j+bb)*c+ch])
						}
					}
					y[((b*(h/2)+i)*(w/2)+j)*c+ch] = m
				}
			}
		}
	}
	return y, []int{n, h / 2, w / 2, c}
}

func TestMaxPool2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range [][]int{{2, 4, 6, 3}, {1, 2, 2, 1}, {3, 6, 4, 5}} {
		x := randSlice(r, prod(d))
		want, yd := naiveMaxPool2(x, d)
		rr := randSlice(r, len(want))
		out := run(t, func(in []*Node) []*Node {
			y := MaxPool2(in[0])
			return []*Node{y, Gradient(ReduceAllSum(Mul(y, in[1])), in[0])[0]}
		}, [][]float64{x, rr}, [][]int{d, yd})
		assertClose(t, "y", out[0], want, 0)
		fx := fdGrad(x, func(v []float64) float64 { y, _ := naiveMaxPool2(v, d); return dot(y, rr) })
		assertClose(t, "dx", out[1], fx, 1e-7)
	}
}

// TestMaxPool2Ties checks that a window with several maxima sends its
// gradient to the first one in row-major order, as PyTorch does.
func TestMaxPool2Ties(t *testing.T) {
	// One window per channel, [1,2,2,3]: channel 0 all equal, channel 1 tie
	// between bottom-left and bottom-right, channel 2 a single maximum at
	// top-right.
	x := []float64{
		1, 0, 0 /**/, 1, 0, 5,
		1, 3, 0 /**/, 1, 3, 0,
	}
	out := run(t, func(in []*Node) []*Node {
		y := MaxPool2(in[0])
		return []*Node{y, Gradient(ReduceAllSum(Mul(y, in[1])), in[0])[0]}
	}, [][]float64{x, {2, 3, 4}}, [][]int{{1, 2, 2, 3}, {1, 1, 1, 3}})
	assertClose(t, "y", out[0], []float64{1, 3, 5}, 0)
	assertClose(t, "dx", out[1], []float64{
		2, 0, 0 /**/, 0, 0, 4,
		0, 3, 0 /**/, 0, 0, 0,
	}, 0)
}

func TestGlobalAvgPool(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d := []int{2, 3, 5, 4}
	x := randSlice(r, prod(d))
	naive := func(v []float64) []float64 {
		y := make([]float64, d[0]*d[3])
		for b := range d[0] {
			for i := range d[1] * d[2] {
				for c := range d[3] {
					y[b*d[3]+c] += v[(b*d[1]*d[2]+i)*d[3]+c] / float64(d[1]*d[2])
				}
			}
		}
		return y
	}
	rr := randSlice(r, d[0]*d[3])
	out := run(t, func(in []*Node) []*Node {
		y := GlobalAvgPool(in[0])
		return []*Node{y, Gradient(ReduceAllSum(Mul(y, in[1])), in[0])[0]}
	}, [][]float64{x, rr}, [][]int{d, {d[0], d[3]}})
	assertClose(t, "y", out[0], naive(x), 1e-12)
	assertClose(t, "dx", out[1], fdGrad(x, func(v []float64) float64 { return dot(naive(v), rr) }), 1e-7)
}
