package models

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/nn"
)

// Logreg is softmax regression x·W + b on the flattened input, with W and b
// starting at zero, as in the paper's MNIST logistic-regression runs. It
// uses an unfused MatMul: on the Go backend the fused dense op is ~2.5×
// slower for 784→10.
func Logreg(classes int) func(*model.Scope, *Node) *Node {
	return func(scope *model.Scope, x *Node) *Node {
		x = Reshape(x, x.Shape().Dim(0), -1)
		scope = scope.In("dense").WithInitializer(Zeros)
		w := scope.VariableWithShape("weights", shapes.Make(x.DType(), x.Shape().Dim(-1), classes))
		b := scope.VariableWithShape("bias", shapes.Make(x.DType(), classes))
		g := x.Graph()
		return Add(MatMul(x, w.NodeValue(g)), InsertAxes(b.NodeValue(g), 0))
	}
}

// MLP is a multilayer perceptron on the flattened input: ReLU layers of the
// given widths, then a linear layer to the classes (784-512-512-10 for
// MLP([]int{512, 512}, 10), the `mlp` model). Its weights come from GoMLX's
// default initializer (He-normal, zero biases), drawn from the store's RNG
// when the first graph is built: seed it with
// [model.Store.SetRNGStateFromSeed] before that for a reproducible run.
func MLP(hidden []int, classes int) func(*model.Scope, *Node) *Node {
	hidden = append([]int(nil), hidden...)
	return func(scope *model.Scope, x *Node) *Node {
		x = Reshape(x, x.Shape().Dim(0), -1)
		for i, h := range hidden {
			x = mlpDense(scope.In("dense%d", i), x, h, activation.TypeRelu)
		}
		return mlpDense(scope.In("dense%d", len(hidden)), x, classes)
	}
}

// mlpDense is act(x·W + b) with W from the scope's initializer and zero b,
// through the backend's fused dense op (with its fused gradient).
func mlpDense(scope *model.Scope, x *Node, out int, act ...activation.Type) *Node {
	in := x.Shape().Dim(-1)
	w := scope.VariableWithShape("weights", shapes.Make(x.DType(), in, out))
	b := scope.WithInitializer(Zeros).VariableWithShape("bias", shapes.Make(x.DType(), out))
	g := x.Graph()
	return nn.Dense(x, w.NodeValue(g), b.NodeValue(g), compute.DenseLayoutInputOutputs, act...)
}
