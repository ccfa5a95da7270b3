package ops

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// naiveConv is the reference cross-correlation, x [N,H,W,C], k [KH,KW,C,O].
func naiveConv(x []float64, xd []int, k []float64, kd []int, stride, pad int) ([]float64, []int) {
	n, h, w, c := xd[0], xd[1], xd[2], xd[3]
	kh, kw, o := kd[0], kd[1], kd[3]
	ho, wo := (h+2*pad-kh)/stride+1, (w+2*pad-kw)/stride+1
	y := make([]float64, n*ho*wo*o)
	for b := range n {
		for i := range ho {
			for j := range wo {
				for oc := range o {
					s := 0.0
					for a := range kh {
						for bb := range kw {
							hi, wi := i*stride+a-pad, j*stride+bb-pad
							if hi < 0 || hi >= h || wi < 0 || wi >= w {
								continue
							}
							for ic := range c {
								s += x[((b*h+hi)*w+wi)*c+ic] * k[((a*kw+bb)*c+ic)*o+oc]
							}
						}
					}
					y[((b*ho+i)*wo+j)*o+oc] = s
				}
			}
		}
	}
	return y, []int{n, ho, wo, o}
}

func TestConv2D(t *testing.T) {
	cases := []struct {
		x, k        []int
		stride, pad int
	}{
		{[]int{2, 5, 6, 3}, []int{3, 3, 3, 4}, 1, 1},
		{[]int{2, 7, 5, 2}, []int{3, 3, 2, 3}, 2, 1},
		{[]int{1, 6, 6, 2}, []int{3, 3, 2, 2}, 2, 1},
		{[]int{2, 5, 7, 3}, []int{1, 1, 3, 4}, 2, 0},
		{[]int{2, 6, 6, 3}, []int{1, 1, 3, 2}, 2, 0},
		{[]int{1, 4, 5, 3}, []int{1, 1, 3, 2}, 1, 0},
		{[]int{2, 6, 5, 1}, []int{3, 3, 1, 2}, 1, 0},
		{[]int{1, 5, 5, 2}, []int{3, 2, 2, 3}, 1, 2},
		{[]int{1, 9, 8, 2}, []int{3, 3, 2, 2}, 3, 1},
	}
	r := rand.New(rand.NewPCG(1, 2))
	defer func(v bool) { conv2DTransposedInputGrad = v }(conv2DTransposedInputGrad)
	for i := range 2 * len(cases) {
		tc := cases[i%len(cases)]
		conv2DTransposedInputGrad = i >= len(cases)
		t.Run(fmt.Sprintf("x%v_k%v_s%d_p%d_transposed=%v", tc.x, tc.k, tc.stride, tc.pad, conv2DTransposedInputGrad), func(t *testing.T) {
			x, k := randSlice(r, prod(tc.x)), randSlice(r, prod(tc.k))
			want, yd := naiveConv(x, tc.x, k, tc.k, tc.stride, tc.pad)
			rr := randSlice(r, len(want))
			out := run(t, func(in []*Node) []*Node {
				y := Conv2D(in[0], in[1], tc.stride, tc.pad)
				loss := ReduceAllSum(Mul(y, in[2]))
				grads := Gradient(loss, in[0], in[1])
				return []*Node{y, grads[0], grads[1]}
			}, [][]float64{x, k, rr}, [][]int{tc.x, tc.k, yd})
			assertClose(t, "y", out[0], want, 1e-12)
			fx := fdGrad(x, func(v []float64) float64 { y, _ := naiveConv(v, tc.x, k, tc.k, tc.stride, tc.pad); return dot(y, rr) })
			assertClose(t, "dx", out[1], fx, 1e-7)
			fk := fdGrad(k, func(v []float64) float64 { y, _ := naiveConv(x, tc.x, v, tc.k, tc.stride, tc.pad); return dot(y, rr) })
			assertClose(t, "dk", out[2], fk, 1e-7)
		})
	}
}

func TestConv2DShapeErrors(t *testing.T) {
	exec, err := NewExec(testBackend(), func(x, k *Node) *Node { return Conv2D(x, k, 1, 1) })
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.Call(tensors.FromShape(shapes.Make(dtypes.Float32, 2, 4, 4, 3)), tensors.FromShape(shapes.Make(dtypes.Float32, 3, 3, 2, 4)))
	if err == nil || !strings.Contains(err.Error(), "kernel [3 3 2 4] has 2 input channels, input [2 4 4 3] has 3") {
		t.Fatalf("error %v, want one naming the channel mismatch", err)
	}
}
