package salsagomlx_test

import (
	"fmt"
	"iter"
	"math/rand/v2"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/loss"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
)

// An existing GoMLX training loop (train.NewTrainer and train.Loop) with its
// learning rate set by SASA+: the three lines marked "SASA+" replace the
// optimizer and attach the scheduler.
func Example_trainLoop() {
	backend := gobackend.GetBackend()
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(1); err != nil {
		panic(err)
	}
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
		return layers.DenseWithBias(scope.In("out"), x, 3)
	}

	// SASA+: the QHM direction as a GoMLX optimizer (instead of, say, optimizer.Adam()).
	opt, err := salsagomlx.NewOptimizer(store, salsagomlx.Config{LR: 0.2, Beta: 0.9, Nu: 1, WeightDecay: 1e-4})
	if err != nil {
		panic(err)
	}
	trainer := train.NewTrainer(backend, store, mlp, loss.SparseCategoricalCrossEntropyLogits, opt, nil, nil)
	loop := train.NewLoop(trainer)

	// SASA+ (paper Algorithm 1), with short windows for this small demo.
	sched, err := schedule.NewSASAPlus(schedule.SASAPlusConfig{LR0: 0.2, Theta: 0.5, Delta: 0.05, Tau: 0.1,
		NMin: 20, KTest: 10, Variance: stats.BM})
	if err != nil {
		panic(err)
	}
	if err := opt.Attach(loop, sched); err != nil { // SASA+: sets α after every step
		panic(err)
	}

	// The scheduler's events (tests, drops) and the step's loss are there
	// for the loop's other hooks.
	drops, losses := 0, []float64{}
	loop.OnStep("watch SASA+", 0, func(*train.Loop, []*tensors.Tensor) error {
		for _, e := range opt.LastResult().Events {
			if e.Kind == schedule.KindDrop {
				drops++
			}
		}
		losses = append(losses, opt.LastStats().Loss)
		return nil
	})

	ds := &blobs{r: rand.New(rand.NewPCG(1, 2)), n: 32}
	if _, err := loop.RunSteps(ds, 400); err != nil {
		panic(err)
	}
	fmt.Println("steps:", sched.Step(), "global step:", trainer.GlobalStep())
	fmt.Println("SASA+ dropped the rate:", drops > 0, "the optimizer follows it:", opt.LR() == sched.LR())
	fmt.Printf("mean loss: first 50 steps %.1f, last 50 steps %.1f\n", mean(losses[:50]), mean(losses[350:]))
	// Output:
	// steps: 400 global step: 400
	// SASA+ dropped the rate: true the optimizer follows it: true
	// mean loss: first 50 steps 0.9, last 50 steps 0.6
}

// blobs is an endless train.Dataset of 3 overlapping Gaussian classes in 4
// dimensions, with labels [n, 1] as GoMLX's sparse losses expect.
type blobs struct {
	r *rand.Rand
	n int
}

func (d *blobs) Name() string { return "blobs" }

func (d *blobs) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		for {
			x := make([]float32, d.n*4)
			y := make([]int32, d.n)
			for i := range y {
				c := d.r.IntN(3)
				y[i] = int32(c)
				for k := 0; k < 4; k++ {
					x[i*4+k] = float32(d.r.NormFloat64())
				}
				x[i*4+c] += 1.5
			}
			b := train.Batch{
				Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, d.n, 4)},
				Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(y, d.n, 1)},
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
