package models

import (
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"

	"github.com/salsaopt/salsa/gomlx/ops"
)

// Layers of the convolutional models, initialized as PyTorch's nn.Conv2d and
// nn.Linear by default: kaiming_uniform(a=√5) for the weights, which is
// U(−1/√fan_in, 1/√fan_in), and the same bound for the biases, with fan_in =
// KH·KW·Cin for a convolution and the input width for a dense layer. All
// values are drawn from the store's RNG when the first graph is built: seed
// it with [model.Store.SetRNGStateFromSeed] before that for reproducible
// weights.

// PyTorch's BatchNorm2d defaults.
const (
	bnMomentum = 0.1
	bnEps      = 1e-5
)

// convUniform is the initializer U(−bound, bound) from the scope's RNG.
func convUniform(scope *model.Scope, bound float64) *model.Scope {
	return scope.WithInitializer(initializer.RandomUniformFn(scope, -bound, bound))
}

// convLayer is a k×k convolution of x [N,H,W,Cin] to out channels with the
// given stride and padding (ops.Conv2D), plus a bias when bias is set. Its
// variables are "weights" [k,k,Cin,out] (HWIO) and "bias" [out].
func convLayer(scope *model.Scope, x *Node, out, k, stride, pad int, bias bool) *Node {
	in := x.Shape().Dim(-1)
	bound := 1 / math.Sqrt(float64(k*k*in))
	scope = convUniform(scope, bound)
	w := scope.VariableWithShape("weights", shapes.Make(x.DType(), k, k, in, out))
	y := ops.Conv2D(x, w.NodeValue(x.Graph()), stride, pad)
	if bias {
		b := scope.VariableWithShape("bias", shapes.Make(x.DType(), out))
		y = Add(y, Reshape(b.NodeValue(x.Graph()), 1, 1, 1, out))
	}
	return y
}

// convBNLayer is convLayer without bias, then batch norm (scope "bn").
func convBNLayer(scope *model.Scope, x *Node, out, k, stride, pad int) *Node {
	y := convLayer(scope, x, out, k, stride, pad, false)
	return ops.BatchNorm(scope.In("bn"), y, bnMomentum, bnEps)
}

// denseLayer is x·W + b for x [N, in], with "weights" [in, out] and "bias"
// [out].
func denseLayer(scope *model.Scope, x *Node, out int) *Node {
	in := x.Shape().Dim(-1)
	scope = convUniform(scope, 1/math.Sqrt(float64(in)))
	w := scope.VariableWithShape("weights", shapes.Make(x.DType(), in, out))
	b := scope.VariableWithShape("bias", shapes.Make(x.DType(), out))
	g := x.Graph()
	return Add(DotGeneral(x, []int{1}, nil, w.NodeValue(g), []int{0}, nil), InsertAxes(b.NodeValue(g), 0))
}

// convRelu is ReLU.
func convRelu(x *Node) *Node { return activation.Relu(x) }
