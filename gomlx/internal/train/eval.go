package train

import (
	"errors"
	"fmt"
	"math"
)

// Evaluation is a run's model, as its checkpoint holds it, evaluated on the
// validation and test splits (salsa eval).
type Evaluation struct {
	Step   int  // the checkpoint's completed steps
	Epochs int  // and completed epochs
	Text   bool // a language model: perplexities are exp(loss)
	// TestN and ValN are the examples (tokens, for a text) evaluated; ValN
	// is 0 where the run has no validation split.
	TestN, ValN       int
	TestLoss, TestAcc float64
	ValLoss, ValAcc   float64 // NaN without a validation split
}

// EvaluateCheckpoint rebuilds the model of ck on src (the run's dataset)
// and evaluates it on the run's validation and test splits. testLimit ≥ 0
// replaces the run's --test-limit (0: the whole split; for a text it limits
// the validation split too, as in training); testLimit < 0 keeps it. With
// the run's own limit, the losses are those of the epoch the checkpoint
// ended, bit for bit. The checkpoint is not changed.
func EvaluateCheckpoint(ck *Checkpoint, src *Source, testLimit int) (*Evaluation, error) {
	if ck == nil || src == nil {
		return nil, errors.New("train: EvaluateCheckpoint: nil checkpoint or source")
	}
	p := ck.Plan // a copy: the limit changes the splits evaluated, not the run
	if testLimit >= 0 {
		p.Options.TestLimit = testLimit
	}
	tr, val, test, err := Splits(src, &p)
	if err != nil {
		return nil, err
	}
	if test == nil {
		return nil, fmt.Errorf("--dataset %s has no test split", p.Options.Dataset)
	}
	eng, err := newEngine(&p, tr)
	if err != nil {
		return nil, err
	}
	if err := eng.UnmarshalBinary(ck.Engine); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	ev := &Evaluation{Step: ck.Step, Epochs: len(ck.Epochs), Text: src.Text != nil, TestN: test.N(), ValLoss: math.NaN(), ValAcc: math.NaN()}
	if ev.TestLoss, ev.TestAcc, err = eng.Evaluate(test); err != nil {
		return nil, err
	}
	if val != nil && val.N() > 0 {
		ev.ValN = val.N()
		if ev.ValLoss, ev.ValAcc, err = eng.Evaluate(val); err != nil {
			return nil, err
		}
	}
	return ev, nil
}
