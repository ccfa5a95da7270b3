package salsagomlx

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/gomlx/models"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// averagingTail is salsa-budget over steps steps with the decay over its
// last half and TailConfig.Average on.
func averagingTail(t *testing.T, steps int) *schedule.Tail {
	t.Helper()
	s, err := schedule.NewTail(schedule.TailConfig{Steps: steps, Fraction: 0.5, Average: true}, testSALSAAlong(t, 0.05, 0, schedule.AlongG))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTrainerAverage trains a model with batch norm under a tail that
// averages its decay: the Trainer folds the parameters after every step
// whose Result asks into the average, which matches a float64 average of
// the same parameters to float32 rounding; the average and its count
// survive a snapshot; BeginAverage makes the average the parameters with
// the batch-norm statistics recomputed, EndAverage(false) puts the last
// iterate and its statistics back bit for bit, and EndAverage(true) keeps
// the average and starts a new one. Misuse is refused.
func TestTrainerAverage(t *testing.T) {
	const in, out, n, steps = 5, 3, 16, 12
	newTr := func() *Trainer {
		tr, err := New(gobackend.GetBackend(), model.NewStore(), bnNet(out, 0), Config{LR: 0.05, Beta: 0.9, Nu: 1})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := newTr()
	s := averagingTail(t, steps)
	r := rand.New(rand.NewPCG(5, 6))
	var xs, ys []*tensors.Tensor
	var sum []float64
	folds := 0
	for k := 1; k <= steps; k++ {
		X, y := randBatch(r, n, in, out)
		x, yt := tensorsOf(X, y, in)
		xs, ys = append(xs, x), append(ys, yt)
		res, _, err := tr.Run(s, x, yt)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		if !res.Average {
			continue
		}
		p, err := gather(nil, tr.trainable)
		if err != nil {
			t.Fatal(err)
		}
		if sum == nil {
			sum = make([]float64, len(p))
		}
		for i, v := range p {
			sum[i] += float64(v)
		}
		folds++
	}
	count := func(tr *Trainer) int {
		t.Helper()
		n, err := tr.AverageCount()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(tr); folds == 0 || folds != n {
		t.Fatalf("%d steps asked for the average, AverageCount %d", folds, n)
	}
	if _, err := tr.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	snap, _ := tr.MarshalBinary()
	restored := newTr()
	if err := restored.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if n := count(restored); n != folds {
		t.Errorf("restored AverageCount %d, want %d", n, folds)
	}
	last, _ := gather(nil, tr.trainable)
	stats := tr.runningStats()
	if len(stats) == 0 {
		t.Fatal("bnNet has no running statistics")
	}
	lastRS, _ := snapshotVals(stats)
	l0, a0, err := tr.EvaluateRows(xs[0], ys[0])
	if err != nil || len(l0) != n || len(a0) != n {
		t.Fatalf("EvaluateRows: %d, %d rows, %v", len(l0), len(a0), err)
	}
	if err := tr.BeginAverage(slices.Values(xs)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.MarshalBinary(); err == nil || !strings.Contains(err.Error(), "between BeginAverage and EndAverage") {
		t.Errorf("snapshot at the average: err = %v", err)
	}
	if err := tr.BeginAverage(nil); err == nil {
		t.Error("BeginAverage twice: no error")
	}
	at, _ := gather(nil, tr.trainable)
	for i, v := range at {
		want := sum[i] / float64(folds)
		if d := math.Abs(float64(v) - want); d > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("parameter %d at the average: %v, the float64 average %v", i, v, want)
		}
	}
	rs, _ := snapshotVals(stats)
	if slices.Equal(rs[0], lastRS[0]) {
		t.Error("BeginAverage left the batch-norm statistics as they were: not recomputed at the average")
	}
	if err := tr.EndAverage(false); err != nil {
		t.Fatal(err)
	}
	back, _ := gather(nil, tr.trainable)
	backRS, _ := snapshotVals(stats)
	if !slices.Equal(back, last) || !slices.EqualFunc(backRS, lastRS, slices.Equal) {
		t.Error("EndAverage(false) did not put the last iterate and its statistics back bit for bit")
	}
	if l1, _, _ := tr.EvaluateRows(xs[0], ys[0]); !slices.Equal(l1, l0) {
		t.Error("the last iterate evaluates differently after EndAverage(false)")
	}
	if n := count(tr); n != folds {
		t.Errorf("after EndAverage(false) AverageCount %d, want %d", n, folds)
	}
	if err := tr.EndAverage(false); err == nil {
		t.Error("EndAverage without BeginAverage: no error")
	}
	if err := tr.BeginAverage(slices.Values(xs)); err != nil {
		t.Fatal(err)
	}
	if err := tr.EndAverage(true); err != nil {
		t.Fatal(err)
	}
	kept, _ := gather(nil, tr.trainable)
	if n := count(tr); !slices.Equal(kept, at) || n != 0 {
		t.Errorf("EndAverage(true): parameters at the average %v, AverageCount %d; want true, 0", slices.Equal(kept, at), n)
	}
	if err := tr.BeginAverage(nil); err == nil || !strings.Contains(err.Error(), "no average") {
		t.Errorf("BeginAverage with no average: err = %v", err)
	}
}

// TestTrainerAverageRestart: a Rollback (schedtest.Script's, as
// TailConfig.ProbeCapConfirm puts a copy back in the decay) at a step that
// folds the average starts it again: the parameters put back are its first
// iterate, and the average at the end is the float64 average of the
// parameters after each step from the rollback's on, the iterates before
// it dropped.
func TestTrainerAverageRestart(t *testing.T) {
	const in, out, n, steps = 5, 3, 16, 12
	tr, err := New(gobackend.GetBackend(), model.NewStore(), bnNet(out, 0), Config{LR: 0.05, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	const save, back = 5, 9 // a copy kept after step 5, put back at step 9
	s := &schedtest.Script{Scheduler: averagingTail(t, steps), Flags: map[int]schedule.Result{
		save: {Save: true, Confirm: true}, back: {Rollback: true, Release: true}}}
	r := rand.New(rand.NewPCG(5, 6))
	var sum, saved []float64
	folds, before := 0, 0
	for k := 1; k <= steps; k++ {
		X, y := randBatch(r, n, in, out)
		x, yt := tensorsOf(X, y, in)
		res, _, err := tr.Run(s, x, yt)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		p, err := gather(nil, tr.trainable)
		if err != nil {
			t.Fatal(err)
		}
		if k == save {
			saved = make([]float64, len(p))
			for i, v := range p {
				saved[i] = float64(v)
			}
		}
		if k == back {
			if !res.Average {
				t.Fatalf("step %d: no average at the rollback: the test does not test the restart", k)
			}
			before = folds
			sum, folds = nil, 0
			for i, v := range p {
				if float64(v) != saved[i] {
					t.Fatalf("step %d: parameter %d is %v after the rollback, the copy of step %d has %v", k, i, v, save, saved[i])
				}
			}
		}
		if !res.Average {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(p))
		}
		for i, v := range p {
			sum[i] += float64(v)
		}
		folds++
	}
	if before == 0 {
		t.Fatal("no iterate folded before the rollback: the test does not test the restart")
	}
	if c, err := tr.AverageCount(); err != nil || c != folds {
		t.Fatalf("AverageCount %d (%v), want %d, the steps from the rollback's on", c, err, folds)
	}
	if err := tr.BeginAverage(nil); err != nil {
		t.Fatal(err)
	}
	at, _ := gather(nil, tr.trainable)
	for i, v := range at {
		want := sum[i] / float64(folds)
		if d := math.Abs(float64(v) - want); d > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("parameter %d at the average: %v, the float64 average from the rollback on %v", i, v, want)
		}
	}
}

// TestAverageRefusals: a Host trainer and the Optimizer refuse a scheduler
// that averages the decay before its first step.
func TestAverageRefusals(t *testing.T) {
	const in, out, n = 5, 3, 8
	tr, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Direction: Host,
		Host: &HostConfig{New: hostMethods[float32]()["dog"]}})
	if err != nil {
		t.Fatal(err)
	}
	s := averagingTail(t, 100)
	X, y := randBatch(rand.New(rand.NewPCG(1, 1)), n, in, out)
	x, yt := tensorsOf(X, y, in)
	if _, _, err := tr.Run(s, x, yt); err == nil || !strings.Contains(err.Error(), "averages the decay's iterates") {
		t.Errorf("Host Run: %v, want the refusal", err)
	}
	o := &Optimizer{t: &Trainer{}}
	if err := o.canSearch(s); err == nil || !strings.Contains(err.Error(), "which the Optimizer does not do") {
		t.Errorf("Optimizer: %v, want the refusal", err)
	}
	if s.Step() != 0 {
		t.Errorf("scheduler at step %d, want 0", s.Step())
	}
}
