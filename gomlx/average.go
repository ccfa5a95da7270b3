package salsagomlx

import (
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// averageScope holds the uniform average x̄ of the decay's iterates that a
// scheduler with [schedule.TailConfig.Average] asks for
// ([schedule.Result.Average]): the average of trainable variable p is at
// averageScope+p, and the number of iterates folded in at averageCountPath.
// Both are in the trainer's snapshot.
const (
	averageScope     = StateScope + "/average"
	averageCountPath = StateScope + "/average_n"
)

// averagePath reports whether p is a variable of the average.
func averagePath(p string) bool {
	return strings.HasPrefix(p, averageScope+"/") || p == averageCountPath
}

// averageState is the Trainer's side of an evaluation at the average:
// between [Trainer.BeginAverage] and [Trainer.EndAverage] the parameters
// are x̄ and keepRS holds the running statistics of the last iterate.
type averageState struct {
	fold   *model.Exec // x̄ ← x̄ + (x − x̄)/n, n ← n + 1, in one graph
	on     bool
	keepRS [][]float32
}

// foldGraph folds the trainable variables into their averages: n ← n + 1,
// x̄ ← x̄ + (x − x̄)/n, so that the first fold makes x̄ = x exactly.
func (t *Trainer) foldGraph(_ *model.Scope, g *Graph) *Node {
	t.store.SetTraining(g, true) // variables as parameters, not constants (bindForEval)
	nv := t.store.VariableWithShape(averageCountPath, shapes.Make(dtypes.Float64), Zeros).SetTrainable(false)
	n := AddScalar(nv.NodeValue(g), 1)
	nv.SetNodeValue(n)
	inv := Inverse(n)
	for _, v := range t.trainable {
		a := t.store.VariableWithShape(averageScope+v.Path(), v.Shape(), Zeros).SetTrainable(false)
		x, m := v.NodeValue(g), a.NodeValue(g)
		a.SetNodeValue(Add(m, Mul(Sub(x, m), ConvertDType(inv, x.DType()))))
	}
	return n
}

// restartAverage drops the iterates folded into the average so far, so that
// the next fold makes x̄ the parameters (a Rollback with Result.Average).
func (t *Trainer) restartAverage() error {
	if v := t.store.GetVariable(averageCountPath); v != nil {
		return v.SetValue(tensors.FromShape(v.Shape()))
	}
	return nil
}

// foldAverage folds the parameters after step into the average (Result.Average).
func (t *Trainer) foldAverage(step int) error {
	if t.trainable == nil {
		return fmt.Errorf("salsagomlx: step %d: an average before the first step", step)
	}
	if t.avg.on {
		return fmt.Errorf("salsagomlx: step %d: a step between BeginAverage and EndAverage", step)
	}
	if t.avg.fold == nil {
		var err error
		if t.avg.fold, err = model.NewExec(t.backend, t.store, t.foldGraph); err != nil {
			return err
		}
	}
	out, err := call("average", t.avg.fold)
	if err != nil {
		return fmt.Errorf("salsagomlx: step %d: the average: %w", step, err)
	}
	out[0].FinalizeAll()
	return nil
}

// AverageCount is the number of iterates in the average of the decay
// ([schedule.Result.Average]); 0 when none is kept. The error is the
// store's, when the count cannot be read.
func (t *Trainer) AverageCount() (int, error) {
	v := t.store.GetVariable(averageCountPath)
	if v == nil {
		return 0, nil
	}
	val, err := v.Value()
	if err != nil {
		return 0, fmt.Errorf("salsagomlx: the average's count %s: %w", averageCountPath, err)
	}
	return int(tensors.ToScalar[float64](val)), nil
}

// BeginAverage makes the average x̄ of the decay's iterates the parameters,
// keeping the last iterate, so that the caller can evaluate there; for a
// classifier with batch norm the running statistics are recomputed at x̄
// by training-mode forward passes over the batches of refresh (inputs
// only), since those collected in training belong to the iterates, not to
// their average. [Trainer.EndAverage] then keeps x̄ or puts the last
// iterate and its statistics back. It is an error when no average is kept.
func (t *Trainer) BeginAverage(refresh iter.Seq[*tensors.Tensor]) error {
	switch {
	case t.avg.on:
		return errors.New("salsagomlx: BeginAverage twice without EndAverage")
	case t.host.inEval:
		return errors.New("salsagomlx: BeginAverage between BeginEval and EndEval")
	}
	switch n, err := t.AverageCount(); {
	case err != nil:
		return fmt.Errorf("salsagomlx: BeginAverage: %w", err)
	case n == 0:
		return errors.New("salsagomlx: BeginAverage: no average of the iterates is kept (schedule.Result.Average)")
	}
	if err := t.swapAverage(); err != nil {
		return err
	}
	rs := t.runningStats()
	keep, err := snapshotVals(rs)
	if err != nil {
		return errors.Join(err, t.swapAverage())
	}
	t.avg.on, t.avg.keepRS = true, keep
	if len(rs) == 0 || t.rec != nil || refresh == nil {
		return nil
	}
	if err := t.refreshStats(refresh); err != nil {
		return errors.Join(err, t.EndAverage(false))
	}
	return nil
}

// EndAverage ends [Trainer.BeginAverage]: with keep the parameters stay x̄
// (with the running statistics recomputed there) and the average starts
// afresh; otherwise the last iterate and its statistics are put back, bit
// for bit, and the average is kept as it was.
func (t *Trainer) EndAverage(keep bool) error {
	if !t.avg.on {
		return errors.New("salsagomlx: EndAverage without BeginAverage")
	}
	t.avg.on = false
	keepRS := t.avg.keepRS
	t.avg.keepRS = nil
	if keep {
		v := t.store.GetVariable(averageCountPath)
		return v.SetValue(tensors.FromScalar(float64(0)))
	}
	if err := t.swapAverage(); err != nil {
		return err
	}
	return restoreVals(t.runningStats(), keepRS)
}

// swapAverage exchanges the trainable variables with their averages.
func (t *Trainer) swapAverage() error {
	for _, v := range t.trainable {
		a := t.store.GetVariable(averageScope + v.Path())
		if a == nil || !a.Shape().Equal(v.Shape()) {
			return fmt.Errorf("salsagomlx: no average of %s kept", v.Path())
		}
		x, err := clonedValue(v)
		if err != nil {
			return err
		}
		m, err := clonedValue(a)
		if err != nil {
			return err
		}
		if err := v.SetValue(m); err != nil {
			return err
		}
		if err := a.SetValue(x); err != nil {
			return err
		}
	}
	return nil
}

// EvaluateRows is [Trainer.EvaluateSums] example by example: each
// example's cross-entropy and 1 where its prediction is right, 0 where not.
func (t *Trainer) EvaluateRows(x, labels *tensors.Tensor) (loss, acc []float64, err error) {
	if t.rec != nil {
		return nil, nil, errors.New("salsagomlx: EvaluateRows: the model is recurrent: use EvaluateSequenceRows")
	}
	if err := checkClassLabels(labels); err != nil {
		return nil, nil, err
	}
	out, err := call("eval", t.eval, x, labels)
	if err != nil {
		return nil, nil, err
	}
	loss, acc, err = evalRows(out[0], out[1], labels, 1)
	return loss, acc, err
}

// EvaluateSequenceRows is [Trainer.EvaluateSequenceSums] stream by stream:
// for each row of labels, the mean cross-entropy of its tokens and the
// fraction of them predicted right; and the next state.
func (t *Trainer) EvaluateSequenceRows(x, labels, state *tensors.Tensor) (loss, acc []float64, next *tensors.Tensor, err error) {
	if t.rec == nil {
		return nil, nil, nil, errors.New("salsagomlx: EvaluateSequenceRows: the model is not recurrent: use EvaluateRows")
	}
	if err := checkSeqLabels(labels); err != nil {
		return nil, nil, nil, err
	}
	out, err := call("eval", t.eval, x, labels, state)
	if err != nil {
		return nil, nil, nil, err
	}
	loss, acc, err = evalRows(out[0], out[1], labels, labels.Shape().Dim(1))
	return loss, acc, out[2], err
}

// evalRows averages the cross-entropies and the right predictions over
// rows of row values, and frees ce and pred.
func evalRows(ce, pred, labels *tensors.Tensor, row int) (loss, acc []float64, err error) {
	defer ce.FinalizeAll()
	defer pred.FinalizeAll()
	if labels.DType() != dtypes.Int32 {
		return nil, nil, fmt.Errorf("salsagomlx: labels dtype %s: must be Int32", labels.DType())
	}
	tensors.MustConstFlatData(ce, func(v []float32) {
		for lo := 0; lo+row <= len(v); lo += row {
			var s float64
			for _, x := range v[lo : lo+row] {
				s += float64(x)
			}
			loss = append(loss, s/float64(row))
		}
	})
	tensors.MustConstFlatData(labels, func(y []int32) {
		tensors.MustConstFlatData(pred, func(p []int32) {
			for lo := 0; lo+row <= len(p); lo += row {
				c := 0
				for i := lo; i < lo+row; i++ {
					if p[i] == y[i] {
						c++
					}
				}
				acc = append(acc, float64(c)/float64(row))
			}
		})
	})
	return loss, acc, nil
}
