package salsagomlx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/salsaopt/salsa/gomlx/models"
	"github.com/salsaopt/salsa/schedule"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// logregModel is softmax regression with an unfused MatMul: on the Go
// backend the fused dense op is ~2.5× slower for 784→10 (but faster for the
// MLP's 512-wide layers).
func logregModel(scope *model.Scope, x *Node) *Node {
	scope = scope.In("dense")
	w := scope.VariableWithShape("weights", shapes.Make(x.DType(), x.Shape().Dim(-1), 10))
	b := scope.WithInitializer(Zeros).VariableWithShape("bias", shapes.Make(x.DType(), 10))
	return Add(MatMul(x, w.NodeValue(x.Graph())), InsertAxes(b.NodeValue(x.Graph()), 0))
}

func mlpModel(scope *model.Scope, x *Node) *Node {
	return models.MLP([]int{512, 512}, 10)(scope, x)
}

type batch struct{ x, y *tensors.Tensor }

func randBatches(nb, n, in, out int) []batch {
	r := rand.New(rand.NewPCG(3, 4))
	bs := make([]batch, nb)
	for i := range bs {
		X, y := randBatch(r, n, in, out)
		for k := range X {
			X[k] = X[k]*0.3 + 0.5 // MNIST-like range
		}
		bs[i] = batch{tensors.FromFlatDataAndDimensions(X, n, in), tensors.FromFlatDataAndDimensions(y, n)}
	}
	return bs
}

// variant is one kind of training step, timed against the others.
type variant struct {
	name string
	step func(tr *Trainer, b batch) error
}

var variants = []variant{
	{"plain", func(tr *Trainer, b batch) error { _, err := tr.Step(b.x, b.y); return err }},
	{"sasa+", func(tr *Trainer, b batch) error { _, err := tr.StepStats(b.x, b.y); return err }},
	{"ssls2", func(tr *Trainer, b batch) error { // SSLS phase, both trials
		if _, _, err := tr.Grad(b.x, b.y); err != nil {
			return err
		}
		for _, eta := range []float64{2e-3, 1e-3} {
			if _, err := tr.Trial(b.x, b.y, eta); err != nil {
				return err
			}
		}
		_, _, err := tr.Update()
		return err
	}},
	ssls1,
}

// ssls1 is a searching step whose first trial is accepted.
var ssls1 = variant{"ssls1", func(tr *Trainer, b batch) error {
	if _, _, err := tr.Grad(b.x, b.y); err != nil {
		return err
	}
	if _, err := tr.Trial(b.x, b.y, 2e-3); err != nil {
		return err
	}
	_, _, err := tr.Update()
	return err
}}

// benchInterleaved times every variant in turn, rounds of 20 steps each, so
// that machine load affects them alike, and reports ms/step of each and the
// ratios to the plain step.
func benchInterleaved(b *testing.B, m Model, in int) {
	tr, err := New(gobackend.GetBackend(), model.NewStore(), m, Config{LR: 1e-3, Beta: 0.9, Nu: 0.7, WeightDecay: 1e-4})
	if err != nil {
		b.Fatal(err)
	}
	timeVariants(b, tr, randBatches(4, 128, in, 10), variants, 20)
}

// BenchmarkStepsLogreg: softmax regression 784→10, batch 128. Targets of the
// issue: ssls/plain ≤ 1.5, sasa+/plain ≤ 1.02.
func BenchmarkStepsLogreg(b *testing.B) { benchInterleaved(b, logregModel, 784) }

// BenchmarkStepsMLP: 784-512-512-10 ReLU, batch 128.
func BenchmarkStepsMLP(b *testing.B) { benchInterleaved(b, mlpModel, 784) }

// BenchmarkPlain times the plain QHM step alone (for profiling).
func BenchmarkPlain(b *testing.B) {
	for _, c := range []struct {
		name string
		m    Model
	}{{"logreg", logregModel}, {"mlp", mlpModel}} {
		b.Run(c.name, func(b *testing.B) {
			tr, err := New(gobackend.GetBackend(), model.NewStore(), c.m, Config{LR: 1e-3, Beta: 0.9, Nu: 0.7, WeightDecay: 1e-4})
			if err != nil {
				b.Fatal(err)
			}
			bs := randBatches(4, 128, 784, 10)
			if _, err := tr.Step(bs[0].x, bs[0].y); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Step(bs[i%4].x, bs[i%4].y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshot times Trainer.MarshalBinary of the 784-512-512-10 MLP
// (0.67 M parameters, 2.7 MB of float32 weights), with the momentum, and
// with a copy kept for the rate probe's rollback (schedule.Result.Save and
// Confirm), which the snapshot holds too.
//
// Run: go test -run '^$' -bench Snapshot .
func BenchmarkSnapshot(b *testing.B) {
	tr, err := New(gobackend.GetBackend(), model.NewStore(), mlpModel, Config{LR: 1e-3, Beta: 0.9, Nu: 1})
	if err != nil {
		b.Fatal(err)
	}
	bs := randBatches(1, 128, 784, 10)
	if _, err := tr.StepStats(bs[0].x, bs[0].y); err != nil {
		b.Fatal(err)
	}
	for _, kept := range []bool{false, true} {
		if kept {
			if err := tr.keepOrRollback(schedule.Result{Step: 1, Save: true, Confirm: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("kept=%v", kept), func(b *testing.B) {
			n := 0
			for range b.N {
				s, err := tr.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				n = len(s)
			}
			b.SetBytes(int64(n))
		})
	}
}

// phases are the graphs of a searching step, each timed alone, against the
// fused step (sasa+): the gradient phase, one trial, the update.
var phases = []variant{
	{"sasa+", func(tr *Trainer, b batch) error { _, err := tr.StepStats(b.x, b.y); return err }},
	{"grad", func(tr *Trainer, b batch) error { _, _, err := tr.Grad(b.x, b.y); return err }},
	{"trial", func(tr *Trainer, b batch) error { _, err := tr.Trial(b.x, b.y, 2e-3); return err }},
	{"update", func(tr *Trainer, b batch) error { _, _, err := tr.Update(); return err }},
	ssls1, // the three in turn, as a searching step runs them
}

// BenchmarkPhasesLSTM times each phase of a searching step of the `lstm`
// model (65 tokens, batch 28, BPTT 64, clip 0.25: held-out H35's shapes)
// against the fused step, interleaved in rounds as benchInterleaved does
// (docs/parity/walltime.md). The graphs run under their salsa_phase
// labels, so that -cpuprofile splits by phase too.
//
// Run: go test -run '^$' -bench PhasesLSTM -benchtime 8x .
func BenchmarkPhasesLSTM(b *testing.B) {
	tr, bs := lstmBench(b)
	LabelPhases(true)
	defer LabelPhases(false)
	timeVariants(b, tr, bs, phases, 5)
	// The times are of finite arithmetic: the updates did not diverge.
	if loss, _, err := tr.Grad(bs[0].x, bs[0].y); err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) {
		b.Fatalf("after the timed steps: loss %v, error %v", loss, err)
	}
}

// lstmBench is a trainer of the `lstm` model (65 tokens, clip 0.25) and
// four batches of 28 streams of 64 tokens: held-out H35's shapes.
func lstmBench(b *testing.B) (*Trainer, []batch) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(1); err != nil {
		b.Fatal(err)
	}
	tr, err := NewRecurrent(gobackend.GetBackend(), store, models.CharLSTM(65), Config{LR: 1, Beta: 0.9, Nu: 1, ClipNorm: 0.25})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	bs := make([]batch, 4)
	for i := range bs {
		x, y := seqBatch(r, 28, 64)
		bs[i] = batch{x, y}
	}
	return tr, bs
}

// timeVariants runs each variant in turn, rounds of round steps, after
// three warm-up steps each (which compile the graphs), so that machine load
// affects them alike, and reports ms per step of each and its ratio to the
// first.
func timeVariants(b *testing.B, tr *Trainer, bs []batch, vs []variant, round int) {
	for _, v := range vs {
		for i := 0; i < 3; i++ {
			if err := v.step(tr, bs[i%len(bs)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	total := make([]time.Duration, len(vs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, v := range vs {
			t0 := time.Now()
			for k := 0; k < round; k++ {
				if err := v.step(tr, bs[k%len(bs)]); err != nil {
					b.Fatal(err)
				}
			}
			total[j] += time.Since(t0)
		}
	}
	steps := float64(b.N * round)
	for j, v := range vs {
		b.ReportMetric(total[j].Seconds()*1e3/steps, "ms/"+v.name)
		if j > 0 {
			b.ReportMetric(total[j].Seconds()/total[0].Seconds(), v.name+"/"+vs[0].name)
		}
	}
	b.ReportMetric(0, "ns/op")
}

// withFold is the fused step followed by the fold of the parameters into
// the average of the decay's iterates (schedule.Result.Average), as every
// step of salsa-probe's decay runs it.
var withFold = []variant{
	{"sasa+", func(tr *Trainer, b batch) error { _, err := tr.StepStats(b.x, b.y); return err }},
	{"fold", func(tr *Trainer, b batch) error {
		if _, err := tr.StepStats(b.x, b.y); err != nil {
			return err
		}
		return tr.foldAverage(1)
	}},
}

// BenchmarkAverageFold times a step of salsa-probe's decay, the fused step
// and the fold of the average, against the fused step alone, interleaved in
// rounds: on the `lstm` model at held-out H35's shapes (batch 28, BPTT 64,
// 0.8 M parameters) and on the 784-512-512-10 MLP (batch 128). fold/sasa+ is
// the decay's cost per step.
//
// Run: go test -run '^$' -bench AverageFold -benchtime 8x .
func BenchmarkAverageFold(b *testing.B) { benchLSTMAndMLP(b, withFold) }

// benchLSTMAndMLP times the variants vs as timeVariants does, on the `lstm`
// model at held-out H35's shapes (rounds of 5 steps) and on the
// 784-512-512-10 MLP with batch 128 (rounds of 20).
func benchLSTMAndMLP(b *testing.B, vs []variant) {
	b.Run("lstm", func(b *testing.B) {
		tr, bs := lstmBench(b)
		timeVariants(b, tr, bs, vs, 5)
	})
	b.Run("mlp", func(b *testing.B) {
		tr, err := New(gobackend.GetBackend(), model.NewStore(), mlpModel, Config{LR: 1e-3, Beta: 0.9, Nu: 1})
		if err != nil {
			b.Fatal(err)
		}
		timeVariants(b, tr, randBatches(4, 128, 784, 10), vs, 20)
	})
}

// withNorm is the fused step followed by the host's sum of ‖x_{k+1}‖²
// ([Trainer.normSq]), as every step before the decay runs it for a
// scheduler that asks (schedule.NormAsker: salsa-probe with
// probe_norm_cap=1).
var withNorm = []variant{
	withFold[0],
	{"norm", func(tr *Trainer, b batch) error {
		if _, err := tr.StepStats(b.x, b.y); err != nil {
			return err
		}
		_, err := tr.normSq()
		return err
	}},
}

// BenchmarkNormSq times a step that reports ‖x_{k+1}‖² against the fused
// step alone, interleaved in rounds, on the `lstm` model at held-out H35's
// shapes and on the 784-512-512-10 MLP, as BenchmarkAverageFold does.
// norm/sasa+ is probe_norm_cap's cost per step.
//
// Run: go test -run '^$' -bench NormSq -benchtime 8x .
func BenchmarkNormSq(b *testing.B) { benchLSTMAndMLP(b, withNorm) }
