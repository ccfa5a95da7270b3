package ops

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// convGeom is the geometry of one convolution: input [N,H,W,C], kernel
// [KH,KW,C,O], stride S, zero padding PH (rows, both sides) and PW
// (columns, both sides), output [N,Ho,Wo,O].
type convGeom struct {
	N, H, W, C  int
	KH, KW, O   int
	S, PH, PW   int
	Ho, Wo      int
	Hp, Wp      int // padded input
	M, K        int // rows and columns of the patch matrix: N·Ho·Wo, KH·KW·C
	patchRowsIn int // KW·C: the contiguous chunk of the padded input one gather index copies
}

func newConvGeom(x, kernel []int, stride, ph, pw int) (convGeom, error) {
	if len(x) != 4 || len(kernel) != 4 {
		return convGeom{}, fmt.Errorf("input %v and kernel %v must have rank 4 ([N,H,W,C] and [KH,KW,C,O])", x, kernel)
	}
	g := convGeom{N: x[0], H: x[1], W: x[2], C: x[3], KH: kernel[0], KW: kernel[1], O: kernel[3], S: stride, PH: ph, PW: pw}
	switch {
	case kernel[2] != g.C:
		return g, fmt.Errorf("kernel %v has %d input channels, input %v has %d", kernel, kernel[2], x, g.C)
	case stride < 1:
		return g, fmt.Errorf("stride %d must be >= 1", stride)
	case ph < 0 || pw < 0:
		return g, fmt.Errorf("padding %d,%d must be >= 0", ph, pw)
	case g.KH < 1 || g.KW < 1 || g.O < 1:
		return g, fmt.Errorf("kernel %v must have positive dimensions", kernel)
	}
	g.Hp, g.Wp = g.H+2*ph, g.W+2*pw
	if g.Hp < g.KH || g.Wp < g.KW {
		return g, fmt.Errorf("kernel %v larger than padded input %dx%d", kernel, g.Hp, g.Wp)
	}
	g.Ho = (g.Hp-g.KH)/stride + 1
	g.Wo = (g.Wp-g.KW)/stride + 1
	g.M = g.N * g.Ho * g.Wo
	g.K = g.KH * g.KW * g.C
	g.patchRowsIn = g.KW * g.C
	return g, nil
}

// pointwise reports whether the patch matrix is the input itself.
func (g convGeom) pointwise() bool {
	return g.KH == 1 && g.KW == 1 && g.S == 1 && g.PH == 0 && g.PW == 0
}

// Conv2D is the 2-D cross-correlation of x [N,H,W,Cin] with kernel
// [KH,KW,Cin,Cout] (HWIO), with the given stride and symmetric zero padding
// pad on both spatial axes, and no bias, as PyTorch's nn.Conv2d (up to the
// NCHW/NHWC layout). The output is [N,H',W',Cout] with
// H' = (H+2·pad−KH)/stride+1 and W' alike.
//
// It runs as im2col + one GEMM: the patch matrix [N·H'·W', KH·KW·Cin] is a
// single Gather from the padded input, each index copying the KW·Cin
// contiguous values of one kernel row, and the output is a DotGeneral with the
// kernel reshaped to [KH·KW·Cin, Cout] (no transposes). The gradients are
// hand-written:
//   - kernel: dWᵀ = dYᵀ·P, a GEMM with the contracted axis laid out for the
//     backend, plus transposes of dY and of the small [Cout, K] result;
//   - input, 1×1 kernel without padding: dY·Wᵀ (reshaped for stride 1, or
//     spread back over the strided grid with an interior Pad);
//   - input, otherwise: dP = dY·Wᵀ (a GEMM with both operands' contracted
//     axis last) scattered back (col2im, one ScatterSum of KW·Cin chunks)
//     into the padded input, then sliced. (A transposed convolution, Conv2D
//     of dY with the flipped kernel, is kept as an option for stride 1; it
//     was slower.)
//
// It panics if the shapes do not fit.
func Conv2D(x, kernel *Node, stride, pad int) *Node {
	geom, err := newConvGeom(x.Shape().Dimensions, kernel.Shape().Dimensions, stride, pad, pad)
	if err != nil {
		panic(fmt.Errorf("ops.Conv2D: %w", err))
	}
	if x.DType() != kernel.DType() || !x.DType().IsFloat() {
		panic(fmt.Errorf("ops.Conv2D: input %s and kernel %s must have the same float dtype", x.Shape(), kernel.Shape()))
	}
	if geom.Ho < 1 || geom.Wo < 1 {
		panic(fmt.Errorf("ops.Conv2D: input %s, kernel %s, stride %d, pad %d give an empty output", x.Shape(), kernel.Shape(), stride, pad))
	}

	// The custom gradients of x and kernel both need dY, the gradient with
	// respect to the output. Reverse-mode autodiff visits the output's
	// identity (built last) before the identities of x and kernel (built
	// first), so the output's gradient function records dY for them. The
	// gradients autodiff builds through the Gather and the DotGeneral reach
	// only the identities of x and kernel, which ignore them, so the backend
	// never runs them (dead code).
	var dy, patches, kernelIn *Node
	xi := IdentityWithCustomGradient(x, func(_, _ *Node) *Node {
		return conv2DInputGrad(geom, dy, kernelIn)
	})
	ki := IdentityWithCustomGradient(kernel, func(_, _ *Node) *Node {
		return conv2DKernelGrad(geom, dy, patches)
	})
	kernelIn = ki
	patches = im2col(geom, xi)
	y := conv2DForward(geom, patches, ki)
	return IdentityWithCustomGradient(y, func(_, v *Node) *Node {
		dy = v
		return v
	})
}

// conv2DForward is the GEMM of the patch matrix [M,K] with the kernel, as
// [N,Ho,Wo,O].
func conv2DForward(geom convGeom, patches, kernel *Node) *Node {
	w := Reshape(kernel, geom.K, geom.O)
	y := DotGeneral(patches, []int{1}, nil, w, []int{0}, nil)
	return Reshape(y, geom.N, geom.Ho, geom.Wo, geom.O)
}

// conv2DNoGrad is the convolution without custom gradients, for the
// backward graphs.
func conv2DNoGrad(geom convGeom, x, kernel *Node) *Node {
	return conv2DForward(geom, im2col(geom, x), kernel)
}

// im2col returns the patch matrix [M, KH·KW·C] of x [N,H,W,C]: row
// (n,oh,ow), column (kh,kw,c) holds xpad[n, oh·S+kh, ow·S+kw, c].
func im2col(geom convGeom, x *Node) *Node {
	if geom.pointwise() {
		return Reshape(x, geom.M, geom.C)
	}
	flat := Reshape(padSpatial(x, geom.PH, geom.PW), geom.N*geom.Hp*geom.Wp*geom.C)
	idx := patchIndices(x.Graph(), geom)
	p := BackendGather(flat, idx, 1, []int{1}, nil, []int{0}, []int{geom.patchRowsIn}, false)
	return Reshape(p, geom.M, geom.K)
}

// padSpatial zero-pads axes 1 and 2 of x [N,H,W,C] by ph and pw on both
// sides.
func padSpatial(x *Node, ph, pw int) *Node {
	if ph == 0 && pw == 0 {
		return x
	}
	return Pad(x, ScalarZero(x.Graph(), x.DType()), PadAxis{}, PadAxis{Start: ph, End: ph}, PadAxis{Start: pw, End: pw}, PadAxis{})
}

// patchIndices are the flat offsets into the padded input of each kernel row
// of each patch, [M·KH, 1], in the order (n, oh, ow, kh).
func patchIndices(g *Graph, geom convGeom) *Node {
	count := geom.M * geom.KH
	if geom.N*geom.Hp*geom.Wp*geom.C <= math.MaxInt32 {
		return Const(g, tensors.FromFlatDataAndDimensions(fillPatchIndices[int32](geom), count, 1))
	}
	return Const(g, tensors.FromFlatDataAndDimensions(fillPatchIndices[int64](geom), count, 1))
}

func fillPatchIndices[T int32 | int64](geom convGeom) []T {
	idx := make([]T, 0, geom.M*geom.KH)
	for n := range geom.N {
		for oh := range geom.Ho {
			for ow := range geom.Wo {
				for kh := range geom.KH {
					row := (n*geom.Hp+oh*geom.S+kh)*geom.Wp + ow*geom.S
					idx = append(idx, T(row*geom.C))
				}
			}
		}
	}
	return idx
}

// conv2DKernelGrad is dW [KH,KW,C,O] = Pᵀ·dY, computed as (dYᵀ·P)ᵀ so that
// both GEMM operands keep their contracted axis where the backend wants it.
func conv2DKernelGrad(geom convGeom, dy, patches *Node) *Node {
	if dy == nil {
		panic("ops.Conv2D: kernel gradient requested before the output gradient")
	}
	dyT := Transpose(Reshape(dy, geom.M, geom.O), 0, 1)                    // [O, M]
	dwT := DotGeneral(dyT, []int{1}, nil, patches, []int{0}, nil)          // [O, K]
	return Reshape(Transpose(dwT, 0, 1), geom.KH, geom.KW, geom.C, geom.O) // [K, O]
}

// conv2DInputGrad is dX [N,H,W,C] from dY [N,Ho,Wo,O].
func conv2DInputGrad(geom convGeom, dy, kernel *Node) *Node {
	if dy == nil {
		panic("ops.Conv2D: input gradient requested before the output gradient")
	}
	switch {
	case conv2DTransposedInputGrad && geom.S == 1 && geom.PH <= geom.KH-1 && geom.PW <= geom.KW-1:
		// Transposed convolution: dX = conv(dY, flip(W)ᵀ, pad K−1−p).
		flipped := Transpose(Reverse(kernel, 0, 1), 2, 3) // [KH,KW,O,C]
		tg, err := newConvGeom(dy.Shape().Dimensions, flipped.Shape().Dimensions, 1, geom.KH-1-geom.PH, geom.KW-1-geom.PW)
		if err != nil || tg.Ho != geom.H || tg.Wo != geom.W {
			panic(fmt.Errorf("ops.Conv2D: transposed convolution geometry %+v for %+v: %v", tg, geom, err))
		}
		return conv2DNoGrad(tg, dy, flipped)
	}
	// dP = dY·Wᵀ: [M,O]×[K,O] contracting O, both operands with O last.
	dp := DotGeneral(Reshape(dy, geom.M, geom.O), []int{1}, nil, Reshape(kernel, geom.K, geom.O), []int{1}, nil)
	if geom.KH == 1 && geom.KW == 1 && geom.PH == 0 && geom.PW == 0 {
		// Non-overlapping taps on the strided grid: spread with interior padding.
		dp = Reshape(dp, geom.N, geom.Ho, geom.Wo, geom.C)
		endH := geom.H - 1 - (geom.Ho-1)*geom.S
		endW := geom.W - 1 - (geom.Wo-1)*geom.S
		return Pad(dp, ScalarZero(dp.Graph(), dp.DType()), PadAxis{},
			PadAxis{End: endH, Interior: geom.S - 1}, PadAxis{End: endW, Interior: geom.S - 1}, PadAxis{})
	}
	// col2im: scatter-add each kernel row of each patch into the padded input.
	g := dy.Graph()
	size := geom.N * geom.Hp * geom.Wp * geom.C
	updates := Reshape(dp, geom.M*geom.KH, geom.patchRowsIn)
	dxp := BackendScatterSum(Zeros(g, shapes.Make(dy.DType(), size)), patchIndices(g, geom), updates,
		1, []int{1}, nil, []int{0}, false, false)
	dxp = Reshape(dxp, geom.N, geom.Hp, geom.Wp, geom.C)
	if geom.PH == 0 && geom.PW == 0 {
		return dxp
	}
	return Slice(dxp, AxisRange(), AxisRange(geom.PH, geom.PH+geom.H), AxisRange(geom.PW, geom.PW+geom.W), AxisRange())
}

// conv2DTransposedInputGrad selects the transposed convolution for the input
// gradient of stride-1 convolutions; the default, col2im with ScatterSum,
// took 30% less CPU in the `cnn` step (the transposed convolution's Gather
// copies a patch matrix of dY twice as large as dP). Tests cover both.
var conv2DTransposedInputGrad = false
