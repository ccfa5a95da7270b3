package ops

import (
	"fmt"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// BatchNorm is batch normalization over all axes of x but the last (the
// channels, C), as PyTorch's nn.BatchNorm2d on NHWC data (Ioffe & Szegedy
// 2015).
//
// Its variables, under scope, all of shape [C] and x's dtype:
//
//	scale     trainable, initially 1 (PyTorch's weight, γ)
//	offset    trainable, initially 0 (PyTorch's bias, β)
//	mean      non-trainable running mean, initially 0
//	variance  non-trainable running variance, initially 1
//
// In training mode (scope.IsTraining) it normalizes with the batch mean μ and
// the biased batch variance σ²: y = (x−μ)/√(σ²+eps)·scale + offset, and sets
// (with Variable.SetNodeValue) the running statistics as PyTorch does:
// mean ← (1−momentum)·mean + momentum·μ and variance ← (1−momentum)·variance +
// momentum·σ²·m/(m−1), the unbiased batch variance, with m the number of
// values per channel. In eval mode it normalizes with the running statistics
// and changes nothing. PyTorch's defaults are momentum 0.1 and eps 1e-5.
//
// The training-mode gradient is hand-written: with x̂ = (x−μ)/√(σ²+eps) and
// dy the output's gradient, d offset = Σdy, d scale = Σdy·x̂ and
// dx = scale/√(σ²+eps)·(dy − (Σdy + x̂·Σdy·x̂)/m).
//
// It panics if x has rank < 2 or, in training mode, a single value per
// channel.
func BatchNorm(scope *model.Scope, x *Node, momentum, eps float64) *Node {
	if x.Rank() < 2 || !x.DType().IsFloat() {
		panic(fmt.Errorf("ops.BatchNorm: input %s must be float with rank >= 2", x.Shape()))
	}
	g := x.Graph()
	dtype := x.DType()
	c := x.Shape().Dim(-1)
	m := x.Shape().Size() / c
	chShape := shapes.Make(dtype, c)
	scaleVar := scope.WithInitializer(Ones).VariableWithShape("scale", chShape)
	offsetVar := scope.WithInitializer(Zeros).VariableWithShape("offset", chShape)
	meanVar := scope.WithInitializer(Zeros).VariableWithShape("mean", chShape).SetTrainable(false)
	varVar := scope.WithInitializer(Ones).VariableWithShape("variance", chShape).SetTrainable(false)
	scale, offset := scaleVar.NodeValue(g), offsetVar.NodeValue(g)

	if !scope.IsTraining(g) {
		inv := Reciprocal(Sqrt(AddScalar(varVar.NodeValue(g), eps)))
		k := Mul(scale, inv)
		b := Sub(offset, Mul(meanVar.NodeValue(g), k))
		return Reshape(Add(Mul(Reshape(x, m, c), row(k)), row(b)), x.Shape().Dimensions...)
	}
	if m < 2 {
		panic(fmt.Errorf("ops.BatchNorm: input %s has %d value per channel in training mode, need more than 1", x.Shape(), m))
	}

	var dy, xhat, inv, scaleIn *Node
	capture := func() {
		if dy == nil {
			panic("ops.BatchNorm: input gradient requested before the output gradient")
		}
	}
	xi := IdentityWithCustomGradient(x, func(_, _ *Node) *Node {
		capture()
		dy2 := Reshape(dy, m, c)
		sumDy := ReduceSum(dy2, 0)
		sumDyXhat := ReduceSum(Mul(dy2, xhat), 0)
		k := Mul(scaleIn, inv)                           // [C]
		a := MulScalar(Mul(k, sumDy), -1/float64(m))     // [C]
		b := MulScalar(Mul(k, sumDyXhat), -1/float64(m)) // [C]
		dx := Add(Add(Mul(dy2, row(k)), Mul(xhat, row(b))), row(a))
		return Reshape(dx, x.Shape().Dimensions...)
	})
	si := IdentityWithCustomGradient(scale, func(_, _ *Node) *Node {
		capture()
		return ReduceSum(Mul(Reshape(dy, m, c), xhat), 0)
	})
	oi := IdentityWithCustomGradient(offset, func(_, _ *Node) *Node {
		capture()
		return ReduceSum(Reshape(dy, m, c), 0)
	})
	scaleIn = si

	x2 := Reshape(xi, m, c)
	mean := MulScalar(ReduceSum(x2, 0), 1/float64(m))
	xc := Sub(x2, row(mean))
	variance := MulScalar(ReduceSum(Mul(xc, xc), 0), 1/float64(m))
	inv = Reciprocal(Sqrt(AddScalar(variance, eps)))
	xhat = Mul(xc, row(inv))
	y := Reshape(Add(Mul(xhat, row(si)), row(oi)), x.Shape().Dimensions...)

	mom := momentum
	meanVar.SetNodeValue(Add(MulScalar(meanVar.NodeValue(g), 1-mom), MulScalar(StopGradient(mean), mom)))
	unbiased := MulScalar(StopGradient(variance), float64(m)/float64(m-1))
	varVar.SetNodeValue(Add(MulScalar(varVar.NodeValue(g), 1-mom), MulScalar(unbiased, mom)))

	return IdentityWithCustomGradient(y, func(_, v *Node) *Node {
		dy = v
		return v
	})
}

// row is v [C] as [1, C], to broadcast over the rows of an [m, C] matrix.
func row(v *Node) *Node { return InsertAxes(v, 0) }
