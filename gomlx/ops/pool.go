package ops

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// MaxPool2 is 2×2 max pooling with stride 2 of x [N,H,W,C] (H and W even),
// giving [N,H/2,W/2,C].
//
// The forward pass is one Gather of the windows, [N·H/2·W/2, 4, C] (each
// index copies the 2·C contiguous values of one window row), and a ReduceMax
// over the 4 positions. The gradient is hand-written: as PyTorch's
// max_pool2d, each window sends its whole gradient to one element, the first
// maximum in row-major window order (top-left, top-right, bottom-left,
// bottom-right); it is laid back into x's layout with one transpose of
// contiguous 2·C blocks (the windows tile x exactly, so no scatter is needed).
//
// It panics if x is not rank 4 or H or W is odd.
func MaxPool2(x *Node) *Node {
	if x.Rank() != 4 || x.Shape().Dim(1)%2 != 0 || x.Shape().Dim(2)%2 != 0 {
		panic(fmt.Errorf("ops.MaxPool2: input %s must be [N,H,W,C] with even H and W", x.Shape()))
	}
	n, h, w, c := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(3)
	ho, wo := h/2, w/2
	m := n * ho * wo

	var dy, windows *Node
	xi := IdentityWithCustomGradient(x, func(_, _ *Node) *Node {
		if dy == nil {
			panic("ops.MaxPool2: input gradient requested before the output gradient")
		}
		g := dy.Graph()
		first := ArgMax(windows, 1)                                        // [M, C]
		pos := Iota(g, shapes.Make(first.DType(), m, 4, c), 1)             // [M, 4, C]
		mask := Equal(pos, BroadcastToDims(InsertAxes(first, 1), m, 4, c)) // [M, 4, C]
		grad := BroadcastToDims(InsertAxes(Reshape(dy, m, c), 1), m, 4, c) // [M, 4, C]
		dw := Where(mask, grad, ZerosLike(grad))                           // [M, 4, C]
		dw = Transpose(Reshape(dw, n*ho, wo, 2, 2*c), 1, 2)                // [N·Ho, 2, Wo, 2C]
		return Reshape(dw, n, h, w, c)
	})
	windows = poolWindows(xi, n, h, w, c)
	y := Reshape(ReduceMax(windows, 1), n, ho, wo, c)
	return IdentityWithCustomGradient(y, func(_, v *Node) *Node {
		dy = v
		return v
	})
}

// poolWindows gathers the 2×2 windows of x as [N·H/2·W/2, 4, C], positions
// in row-major window order.
func poolWindows(x *Node, n, h, w, c int) *Node {
	ho, wo := h/2, w/2
	count := n * ho * wo * 2
	var idx *tensors.Tensor
	if n*h*w*c <= math.MaxInt32 {
		idx = tensors.FromFlatDataAndDimensions(fillPoolIndices[int32](n, h, w, c), count, 1)
	} else {
		idx = tensors.FromFlatDataAndDimensions(fillPoolIndices[int64](n, h, w, c), count, 1)
	}
	flat := Reshape(x, n*h*w*c)
	p := BackendGather(flat, Const(x.Graph(), idx), 1, []int{1}, nil, []int{0}, []int{2 * c}, true)
	return Reshape(p, n*ho*wo, 4, c)
}

// fillPoolIndices are the flat offsets of the two rows of each window, in the
// order (n, oh, ow, row): increasing.
func fillPoolIndices[T int32 | int64](n, h, w, c int) []T {
	idx := make([]T, 0, n*h*w/2)
	for b := range n {
		for oh := range h / 2 {
			for ow := range w / 2 {
				for r := range 2 {
					idx = append(idx, T(((b*h+2*oh+r)*w+2*ow)*c))
				}
			}
		}
	}
	return idx
}

// GlobalAvgPool is the mean over the spatial axes of x [N,H,W,C], giving
// [N,C].
func GlobalAvgPool(x *Node) *Node {
	if x.Rank() != 4 {
		panic(fmt.Errorf("ops.GlobalAvgPool: input %s must be [N,H,W,C]", x.Shape()))
	}
	return ReduceMean(x, 1, 2)
}
