package train

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
)

func init() { Engines["gomlx"] = newGoMLXEngine }

// MLPHidden are the hidden widths of --model mlp (784-512-512-10 on MNIST).
var MLPHidden = []int{512, 512}

// evalChunk is the number of examples evaluated per graph call.
const evalChunk = 1000

// gomlxEngine trains a model of package salsagomlx on the Go backend.
type gomlxEngine struct {
	tr    *salsagomlx.Trainer
	train *Split
	bufs  map[int]batchBuf // input tensors by batch size, reused
}

type batchBuf struct{ x, y *tensors.Tensor }

// checkSplit reports a split whose arrays do not match its dimensions.
func checkSplit(name string, s *Split) error {
	switch {
	case s == nil:
		return fmt.Errorf("%s split: nil", name)
	case s.Dim < 1 || s.Labels < 2:
		return fmt.Errorf("%s split: Dim = %d, Labels = %d: must be ≥ 1 and ≥ 2", name, s.Dim, s.Labels)
	case len(s.X) != s.N()*s.Dim:
		return fmt.Errorf("%s split: %d features for %d examples of %d", name, len(s.X), s.N(), s.Dim)
	}
	for i, y := range s.Y {
		if y < 0 || int(y) >= s.Labels {
			return fmt.Errorf("%s split: label %d of example %d: must be in [0, %d)", name, y, i, s.Labels)
		}
	}
	return nil
}

// newGoMLXEngine builds the model of p.Options.Model (logreg starting at
// zero, or the MLP with weights drawn from the store's RNG seeded with
// p.Options.Seed) and the direction of p.Direction.
func newGoMLXEngine(p *Plan, train *Split) (Engine, error) {
	if err := checkSplit("training", train); err != nil {
		return nil, err
	}
	store := model.NewStore()
	var m salsagomlx.Model
	switch p.Options.Model {
	case "logreg":
		m = salsagomlx.Logreg(train.Labels)
	case "mlp":
		m = salsagomlx.MLP(MLPHidden, train.Labels)
		if err := store.SetRNGStateFromSeed(int64(p.Options.Seed)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("--model %s: the gomlx engine has logreg and mlp", p.Options.Model)
	}
	d := p.Direction
	// LR is the first value only: Trainer.Run sets α from the scheduler at
	// every step.
	cfg := salsagomlx.Config{LR: p.Options.LR0, WeightDecay: d.WeightDecay}
	switch d.Kind {
	case "qhm":
		cfg.Beta, cfg.Nu = d.Momentum, d.Nu
	case "adam":
		cfg.Direction, cfg.Beta1, cfg.Beta2, cfg.Eps = salsagomlx.Adam, d.AdamBeta1, d.AdamBeta2, d.AdamEps
	default:
		return nil, fmt.Errorf("direction %q: must be qhm or adam", d.Kind)
	}
	tr, err := salsagomlx.New(gobackend.GetBackend(), store, m, cfg)
	if err != nil {
		return nil, err
	}
	return &gomlxEngine{tr: tr, train: train, bufs: map[int]batchBuf{}}, nil
}

func (e *gomlxEngine) Name() string { return "gomlx" }

// buf returns the reused input tensors for n examples.
func (e *gomlxEngine) buf(n, dim int) batchBuf {
	b, ok := e.bufs[n]
	if !ok || b.x.Shape().Dim(1) != dim {
		b = batchBuf{tensors.FromShape(shapes.Make(dtypes.Float32, n, dim)), tensors.FromShape(shapes.Make(dtypes.Int32, n))}
		e.bufs[n] = b
	}
	return b
}

// fill copies the examples idx of sp (or lo..lo+n when idx is nil) into b.
func fill(b batchBuf, sp *Split, idx []int, lo, n int) error {
	d := sp.Dim
	if err := tensors.MutableFlatData(b.x, func(x []float32) {
		for i := 0; i < n; i++ {
			j := lo + i
			if idx != nil {
				j = idx[i]
			}
			copy(x[i*d:(i+1)*d], sp.X[j*d:(j+1)*d])
		}
	}); err != nil {
		return err
	}
	return tensors.MutableFlatData(b.y, func(y []int32) {
		for i := 0; i < n; i++ {
			j := lo + i
			if idx != nil {
				j = idx[i]
			}
			y[i] = sp.Y[j]
		}
	})
}

// Step gathers the training examples idx and runs one protocol step of s.
func (e *gomlxEngine) Step(s schedule.Scheduler, idx []int) (StepOut, error) {
	if len(idx) == 0 {
		return StepOut{}, fmt.Errorf("gomlx engine: empty batch")
	}
	for _, j := range idx {
		if j < 0 || j >= e.train.N() {
			return StepOut{}, fmt.Errorf("gomlx engine: example %d: must be in [0, %d)", j, e.train.N())
		}
	}
	b := e.buf(len(idx), e.train.Dim)
	if err := fill(b, e.train, idx, 0, len(idx)); err != nil {
		return StepOut{}, err
	}
	res, st, err := e.tr.Run(s, b.x, b.y)
	return StepOut{Result: res, Loss: st.Loss, X1D: st.X1D, D2: st.D2}, err
}

// Evaluate returns the mean cross-entropy (without L2) and the accuracy on
// sp, evaluated in chunks of 1000 examples and summed in float64.
func (e *gomlxEngine) Evaluate(sp *Split) (loss, acc float64, err error) {
	if err := checkSplit("evaluation", sp); err != nil {
		return 0, 0, err
	}
	if sp.Dim != e.train.Dim {
		return 0, 0, fmt.Errorf("evaluation split: Dim = %d: the model takes %d", sp.Dim, e.train.Dim)
	}
	if sp.N() == 0 {
		return 0, 0, fmt.Errorf("evaluation split: no examples")
	}
	var sum float64
	var correct int
	for lo := 0; lo < sp.N(); lo += evalChunk {
		n := min(evalChunk, sp.N()-lo)
		b := e.buf(n, sp.Dim)
		if err := fill(b, sp, nil, lo, n); err != nil {
			return 0, 0, err
		}
		l, c, _, err := e.tr.EvaluateSums(b.x, b.y)
		if err != nil {
			return 0, 0, err
		}
		sum += l
		correct += c
	}
	return sum / float64(sp.N()), float64(correct) / float64(sp.N()), nil
}

func (e *gomlxEngine) MarshalBinary() ([]byte, error) { return e.tr.MarshalBinary() }
func (e *gomlxEngine) UnmarshalBinary(b []byte) error { return e.tr.UnmarshalBinary(b) }
func (e *gomlxEngine) ResetMomentum() error           { return e.tr.ResetMomentum() }

// PlainStep is the adapter's plain fused step at rate lr: no scheduler, no
// statistics returned to the host.
func (e *gomlxEngine) PlainStep(idx []int, lr float64) (float64, error) {
	b := e.buf(len(idx), e.train.Dim)
	if err := fill(b, e.train, idx, 0, len(idx)); err != nil {
		return 0, err
	}
	if err := e.tr.SetLR(lr); err != nil {
		return 0, err
	}
	return e.tr.Step(b.x, b.y)
}
