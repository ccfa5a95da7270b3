package salsagomlx_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
)

// A GoMLX training loop scheduled by a schedule.Scheduler: build a Trainer
// around the model function, then call Run once per mini-batch.
func Example() {
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = salsagomlx.Dense(scope.In("hidden"), x, 16, activation.TypeRelu)
		return salsagomlx.Dense(scope.In("out"), x, 3)
	}
	tr, err := salsagomlx.New(gobackend.GetBackend(), model.NewStore(), mlp,
		salsagomlx.Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 1e-4})
	if err != nil {
		panic(err)
	}
	var sched schedule.Scheduler = newExampleScheduler(0.1) // e.g. schedule.NewSALSA(...)

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
	fmt.Println("steps:", sched.Step(), "loss fell:", last < first/2)
	// Output: steps: 200 loss fell: true
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

// exampleScheduler is a constant learning rate standing in for the schedulers
// of package schedule in this example.
type exampleScheduler struct {
	lr   float64
	step int
	open bool
}

func newExampleScheduler(lr float64) *exampleScheduler { return &exampleScheduler{lr: lr} }

func (s *exampleScheduler) Name() string    { return "constant" }
func (s *exampleScheduler) LR() float64     { return s.lr }
func (s *exampleScheduler) Step() int       { return s.step }
func (s *exampleScheduler) Searching() bool { return false }
func (s *exampleScheduler) Begin(_, _ float64) (schedule.Request, error) {
	if s.open {
		return schedule.Request{}, schedule.ErrPhase
	}
	s.open = true
	return schedule.Request{LR: s.lr}, nil
}
func (s *exampleScheduler) Trial(float64) (schedule.Request, error) {
	return schedule.Request{}, schedule.ErrPhase
}
func (s *exampleScheduler) End(schedule.Observation) (schedule.Result, error) {
	if !s.open {
		return schedule.Result{}, schedule.ErrPhase
	}
	s.open = false
	s.step++
	return schedule.Result{Step: s.step, LR: s.lr, NextLR: s.lr}, nil
}
func (s *exampleScheduler) Abort()                         { s.open = false }
func (s *exampleScheduler) MarshalBinary() ([]byte, error) { return nil, nil }
func (s *exampleScheduler) UnmarshalBinary([]byte) error   { return nil }
