package models

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/gomlx/ops"
)

// CNN is the project's small convolutional classifier for NHWC images (the
// `cnn` task, in the style of PyTorch's examples/mnist): conv 3×3 32 (pad 1)
// + bias, ReLU, 2×2 max-pool; conv 3×3 64 (pad 1) + bias, ReLU, 2×2
// max-pool; flatten; dense 128 + ReLU; dense classes. H and W must be
// multiples of 4. On 28×28×1 inputs with 10 classes it has 421,642
// parameters, as its PyTorch twin. Initialization: PyTorch's defaults (see
// convLayer and denseLayer).
//
// Variables: conv1/{weights,bias}, conv2/{weights,bias}, dense1/{weights,bias},
// dense2/{weights,bias}.
func CNN(classes int) func(*model.Scope, *Node) *Node {
	return func(scope *model.Scope, x *Node) *Node {
		x = ops.MaxPool2(convRelu(convLayer(scope.In("conv1"), x, 32, 3, 1, 1, true)))
		x = ops.MaxPool2(convRelu(convLayer(scope.In("conv2"), x, 64, 3, 1, 1, true)))
		x = Reshape(x, x.Shape().Dim(0), -1)
		x = convRelu(denseLayer(scope.In("dense1"), x, 128))
		return denseLayer(scope.In("dense2"), x, classes)
	}
}
