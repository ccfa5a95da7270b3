package salsagomlx_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/direction"
	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
)

// A GoMLX training loop scheduled by a schedule.Scheduler: build a Trainer
// around the model function, then call Run once per mini-batch.
func Example() {
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
		return layers.DenseWithBias(scope.In("out"), x, 3)
	}
	tr, err := salsagomlx.New(gobackend.GetBackend(), model.NewStore(), mlp,
		salsagomlx.Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 1e-4})
	if err != nil {
		panic(err)
	}
	// SALSA with the paper's defaults for 6400 examples in batches of 32,
	// starting from a small rate.
	cfg, err := schedule.Defaults(schedule.PresetPaper, 6400, 32, 0.01)
	if err != nil {
		panic(err)
	}
	sched, err := schedule.NewSALSA(cfg.SALSA())
	if err != nil {
		panic(err)
	}

	r := rand.New(rand.NewPCG(1, 1))
	var first, last float64
	for step := 0; step < 200; step++ {
		x, y := toyBatch(r, 32)
		res, st, err := tr.Run(sched, x, y) // Begin, trials, update, End, momentum reset
		if err != nil {
			panic(err) // st.Loss tells a NaN loss from other failures
		}
		_ = res.Events // tests and drops of this step
		if step == 0 {
			first = st.Loss
		}
		last = st.Loss
	}
	fmt.Println("steps:", sched.Step(), "loss fell:", last < first/2, "SSLS raised the rate:", sched.LR() > 0.1)
	// Output: steps: 200 loss fell: true SSLS raised the rate: true
}

// toyBatch draws 3 well-separated Gaussian classes in 4 dimensions.
func toyBatch(r *rand.Rand, n int) (*tensors.Tensor, *tensors.Tensor) {
	x := make([]float32, n*4)
	y := make([]int32, n)
	for i := range y {
		c := r.IntN(3)
		y[i] = int32(c)
		for k := 0; k < 4; k++ {
			x[i*4+k] = float32(r.NormFloat64())
		}
		x[i*4+c] += 3
	}
	return tensors.FromFlatDataAndDimensions(x, n, 4), tensors.FromFlatDataAndDimensions(y, n)
}

// A learning-rate-free peer on a GoMLX model: Prodigy runs as the Host
// direction (its update on the host, the gradient from the graph) under a
// constant schedule at its authors' lr 1. Its own step, α·d_k, is the
// direction's EffectiveLR; salsa train logs it as steps.csv's step_size.
func Example_prodigy() {
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
		return layers.DenseWithBias(scope.In("out"), x, 3)
	}
	prodigy := func(n int) (direction.LRAware[float32], error) {
		return direction.NewProdigy[float32](direction.DefaultProdigy(), n)
	}
	tr, err := salsagomlx.New(gobackend.GetBackend(), model.NewStore(), mlp,
		salsagomlx.Config{LR: 1, Direction: salsagomlx.Host, Host: &salsagomlx.HostConfig{New: prodigy}})
	if err != nil {
		panic(err)
	}
	sched, err := schedule.NewConstant(schedule.ConstantConfig{LR: 1, Tau: 0.1})
	if err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	var steps []float64
	for range 200 {
		x, y := toyBatch(r, 32)
		if _, _, err := tr.Run(sched, x, y); err != nil {
			panic(err)
		}
		dir, _ := tr.HostDirection()
		steps = append(steps, dir.EffectiveLR())
	}
	fmt.Printf("α = %g throughout; Prodigy's step α·d_k: %.0e at step 1, above 1e-3 at step 200: %v\n",
		sched.LR(), steps[0], steps[199] > 1e-3)
	// Output: α = 1 throughout; Prodigy's step α·d_k: 1e-06 at step 1, above 1e-3 at step 200: true
}
