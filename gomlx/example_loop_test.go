package salsagomlx_test

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"os"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/gomlx/gomlx/ml/train/metric"
	"github.com/gomlx/gomlx/ml/train/optimizer"
	"github.com/gomlx/gomlx/ui/commandline"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
)

// A stock GoMLX program: an MLP trained by SGD in a train.Loop with a
// progress bar, GoMLX metrics and an evaluation.
// Example_salsaTrainLoop is the same program with SALSA.
func Example_sgdTrainLoop() {
	backend := gobackend.GetBackend()
	store := model.NewStore()
	must(store.SetRNGStateFromSeed(1))
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
		return layers.DenseWithBias(scope.In("out"), x, 3)
	}
	trainMetrics := []metric.Interface{metric.NewMovingAverageSparseCategoricalAccuracy("Moving Average Accuracy", "~acc", 0.01)}
	evalMetrics := []metric.Interface{metric.NewSparseCategoricalAccuracy("Mean Accuracy", "#acc")}
	trainer := train.NewTrainer(backend, store, mlp, loss.SparseCategoricalCrossEntropyLogits,
		optimizer.StochasticGradientDescent(), trainMetrics, evalMetrics)
	loop := train.NewLoop(trainer)
	restore := quiet() // the progress bar writes to os.Stdout
	commandline.AttachProgressBar(loop)
	trained, err := loop.RunSteps(&gaussians{seed: 1, batch: 32}, 2000)
	must(err)
	restore()
	m, err := trainer.Eval(&gaussians{seed: 99, batch: 1000, batches: 1})
	must(err)
	fmt.Printf("step %d, train accuracy (moving average) %.2f, test accuracy %.2f\n",
		trainer.GlobalStep(), shapes.ConvertTo[float64](trained[2].Value()), shapes.ConvertTo[float64](m[1].Value()))
	// Output: step 2000, train accuracy (moving average) 0.76, test accuracy 0.77
}

// Example_sgdTrainLoop with SALSA: a scheduler, the optimizer, the trainer
// from salsagomlx.NewTrainer, and Attach.
// The scheduler has the paper's defaults for 6400 examples in batches of 32;
// SALSA's line search runs after each train step, inside the loop, on the
// step's mini-batch.
func Example_salsaTrainLoop() {
	backend := gobackend.GetBackend()
	store := model.NewStore()
	must(store.SetRNGStateFromSeed(1))
	mlp := func(scope *model.Scope, x *Node) *Node {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
		return layers.DenseWithBias(scope.In("out"), x, 3)
	}
	trainMetrics := []metric.Interface{metric.NewMovingAverageSparseCategoricalAccuracy("Moving Average Accuracy", "~acc", 0.01)}
	evalMetrics := []metric.Interface{metric.NewSparseCategoricalAccuracy("Mean Accuracy", "#acc")}
	sched, err := salsagomlx.PaperSALSA(6400, 32, 0.01)
	must(err)
	opt, err := salsagomlx.NewOptimizer(store, salsagomlx.DefaultConfig())
	must(err)
	trainer := salsagomlx.NewTrainer(backend, store, mlp, loss.SparseCategoricalCrossEntropyLogits,
		opt, trainMetrics, evalMetrics)
	loop := train.NewLoop(trainer)
	must(opt.Attach(loop, sched))
	restore := quiet() // the progress bar writes to os.Stdout
	commandline.AttachProgressBar(loop)
	trained, err := loop.RunSteps(&gaussians{seed: 1, batch: 32}, 2000)
	must(err)
	restore()
	m, err := trainer.Eval(&gaussians{seed: 99, batch: 1000, batches: 1})
	must(err)
	fmt.Printf("step %d, train accuracy (moving average) %.2f, test accuracy %.2f, SALSA's lr %.3g\n",
		trainer.GlobalStep(), shapes.ConvertTo[float64](trained[2].Value()), shapes.ConvertTo[float64](m[1].Value()), sched.LR())
	// Output: step 2000, train accuracy (moving average) 0.77, test accuracy 0.78, SALSA's lr 0.282
}

// gaussians is a train.Dataset of 3 overlapping Gaussian classes in 4
// dimensions, with labels [n, 1] as GoMLX's sparse losses expect: endless
// when batches is 0, else that many batches.
type gaussians struct {
	seed           uint64
	batch, batches int
}

func (d *gaussians) Name() string { return "gaussians" }

func (d *gaussians) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		r := rand.New(rand.NewPCG(d.seed, 2))
		for k := 0; d.batches == 0 || k < d.batches; k++ {
			x := make([]float32, d.batch*4)
			y := make([]int32, d.batch)
			for i := range y {
				c := r.IntN(3)
				y[i] = int32(c)
				for j := 0; j < 4; j++ {
					x[i*4+j] = float32(r.NormFloat64())
				}
				x[i*4+c] += 1.5
			}
			b := train.Batch{
				Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, d.batch, 4)},
				Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(y, d.batch, 1)},
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// quiet sends os.Stdout to /dev/null until restore is called: the progress
// bar writes there, and an example's output must not depend on its timing.
func quiet() (restore func()) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	must(err)
	stdout := os.Stdout
	os.Stdout = null
	return func() { os.Stdout = stdout; null.Close() }
}
