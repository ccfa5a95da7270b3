package models

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/gomlx/ops"
)

// ResNet20 is the CIFAR ResNet-20 of He, Zhang, Ren and Sun, "Deep Residual
// Learning for Image Recognition" (CVPR 2016), section 4.2: conv 3×3 16 + BN +
// ReLU; three stages of 3 basic blocks with 16, 32 and 64 channels, the
// first block of stages 2 and 3 with stride 2 and a 1×1 convolution (stride
// 2) + BN projection shortcut (option B; the paper's CIFAR runs use the
// parameter-free option A); global average pooling; dense classes with bias.
// Convolutions have no bias. It has 272,474 parameters for 3×32×32 inputs
// and 10 classes. Initialization: PyTorch's defaults (see convLayer,
// denseLayer; BN scale 1, offset 0).
func ResNet20(classes int) func(*model.Scope, *Node) *Node {
	return resNet(16, []int{16, 32, 64}, 3, classes)
}

// ResNet18 is the CIFAR ResNet-18 of kuangliu/pytorch-cifar (models/resnet.py,
// after He et al. 2016): conv 3×3 64 + BN + ReLU, no max-pool; four stages of
// 2 basic blocks with 64, 128, 256 and 512 channels, the first block of
// stages 2–4 with stride 2 and a 1×1 convolution (stride 2) + BN projection
// shortcut; global average pooling; dense classes with bias. It has
// 11,173,962 parameters for 3×32×32 inputs and 10 classes.
// Initialization: PyTorch's defaults, as ResNet20.
func ResNet18(classes int) func(*model.Scope, *Node) *Node {
	return resNet(64, []int{64, 128, 256, 512}, 2, classes)
}

// resNet builds a CIFAR-style ResNet of basic blocks. Variables:
// stem/{weights,bn/*}, stage{s}/block{b}/{conv1,conv2,shortcut}/{weights,bn/*},
// dense/{weights,bias}.
func resNet(stem int, widths []int, blocks, classes int) func(*model.Scope, *Node) *Node {
	widths = append([]int(nil), widths...)
	return func(scope *model.Scope, x *Node) *Node {
		x = convRelu(convBNLayer(scope.In("stem"), x, stem, 3, 1, 1))
		for s, width := range widths {
			stage := scope.In("stage%d", s+1)
			for b := range blocks {
				stride := 1
				if s > 0 && b == 0 {
					stride = 2
				}
				x = resNetBasicBlock(stage.In("block%d", b+1), x, width, stride)
			}
		}
		return denseLayer(scope.In("dense"), ops.GlobalAvgPool(x), classes)
	}
}

// resNetBasicBlock is ReLU(BN(conv3×3(ReLU(BN(conv3×3(x))))) + shortcut(x)),
// the shortcut a 1×1 convolution + BN when the stride or width changes, else
// the identity.
func resNetBasicBlock(scope *model.Scope, x *Node, width, stride int) *Node {
	h := convRelu(convBNLayer(scope.In("conv1"), x, width, 3, stride, 1))
	h = convBNLayer(scope.In("conv2"), h, width, 3, 1, 1)
	shortcut := x
	if stride != 1 || x.Shape().Dim(-1) != width {
		shortcut = convBNLayer(scope.In("shortcut"), x, width, 1, stride, 0)
	}
	return convRelu(Add(h, shortcut))
}
