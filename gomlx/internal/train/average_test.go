package train

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// fakeAverager returns cells at the last iterate and at the average, and
// records how the average ended.
type fakeAverager struct {
	last, avg [2][]float64 // loss, acc
	at        bool
	ends      []bool
	failAvg   error
}

func (f *fakeAverager) BeginAverage() error { f.at = true; return nil }
func (f *fakeAverager) EndAverage(keep bool) error {
	f.at, f.ends = false, append(f.ends, keep)
	return nil
}
func (f *fakeAverager) EvaluateCells(*Split) ([]float64, []float64, error) {
	if f.at {
		return f.avg[0], f.avg[1], f.failAvg
	}
	return f.last[0], f.last[1], nil
}

// fakePicker records the gains it is given and keeps the average when their
// sum is positive; pickAverage calls none of the Scheduler's methods.
type fakePicker struct {
	schedule.Scheduler
	gain   []float64
	metric string
}

func (p *fakePicker) Averages() bool { return true }
func (p *fakePicker) PickAverage(gain []float64, metric string) (schedule.Event, error) {
	p.gain, p.metric = gain, metric
	var s float64
	for _, g := range gain {
		s += g
	}
	return schedule.Event{Kind: schedule.KindAverage, Accept: s > 0, Reason: metric}, nil
}

// TestPickAverage: on a text the gain of a cell is the last iterate's loss
// minus the average's; on images the average's right predictions minus the
// last iterate's; the engine ends at the one picked, and after a failed
// evaluation at the last iterate.
func TestPickAverage(t *testing.T) {
	for _, c := range []struct {
		text   bool
		want   []float64
		metric string
		keep   bool
	}{
		{true, []float64{0.5, -0.25}, "loss", true},
		{false, []float64{-1, 0}, "accuracy", false},
	} {
		e := &fakeAverager{last: [2][]float64{{2, 1}, {1, 0}}, avg: [2][]float64{{1.5, 1.25}, {0, 0}}}
		p := &fakePicker{}
		ev, err := pickAverage(p, e, nil, c.text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.gain, c.want) || p.metric != c.metric || ev.Accept != c.keep || !slices.Equal(e.ends, []bool{c.keep}) {
			t.Errorf("text %v: gains %v (%s), kept %v, ends %v; want %v (%s), %v", c.text, p.gain, p.metric, ev.Accept, e.ends, c.want, c.metric, c.keep)
		}
	}
	e := &fakeAverager{last: [2][]float64{{2, 1}, {1, 0}}, avg: [2][]float64{{1}, {0}}}
	if _, err := pickAverage(&fakePicker{}, e, nil, true); err == nil || !slices.Equal(e.ends, []bool{false}) {
		t.Errorf("cells of another count: err %v, ends %v; want an error and the last iterate back", err, e.ends)
	}
	e = &fakeAverager{failAvg: errors.New("boom")}
	if _, err := pickAverage(&fakePicker{}, e, nil, true); err == nil || !slices.Equal(e.ends, []bool{false}) {
		t.Errorf("a failed evaluation: err %v, ends %v; want an error and the last iterate back", err, e.ends)
	}
}

// TestNativeAverageRestart: in the native engine a Rollback
// (schedtest.Script's) at a step that folds the average starts it again at
// the parameters put back, the iterates before dropped.
func TestNativeAverageRestart(t *testing.T) {
	tr := synth(640, 24, 1)
	p := plan(t, "salsa-budget", tr.N(), [2]string{"average", "1"})
	eng, err := newNativeEngine(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*nativeEngine)
	c := p.Schedule
	c.SetBudget(20, 0)
	c.Tail.Fraction = 0.5
	in, err := schedule.New("salsa-budget", c)
	if err != nil {
		t.Fatal(err)
	}
	const save, back = 8, 14 // a copy kept after step 8, put back at step 14
	s := &schedtest.Script{Scheduler: in, Flags: map[int]schedule.Result{
		save: {Save: true, Confirm: true}, back: {Rollback: true, Release: true}}}
	perm := Perm(1, 1, tr.N())
	var saved []float32
	var sum []float64
	folds, before := 0, 0
	for k := 1; k <= 20; k++ {
		out, err := e.Step(s, Batch{Idx: perm[(k-1)*32 : k*32], Epoch: 1, Step: k})
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		if k == save {
			saved = slices.Clone(e.t.X)
		}
		if k == back {
			if !out.Result.Average || !slices.Equal(e.t.X, saved) {
				t.Fatalf("step %d: Average %v, parameters put back %v: the test does not test the restart", k, out.Result.Average, slices.Equal(e.t.X, saved))
			}
			before, sum, folds = folds, nil, 0
		}
		if !out.Result.Average {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(e.t.X))
		}
		for i, x := range e.t.X {
			sum[i] += float64(x)
		}
		folds++
	}
	if before == 0 || e.meanN != folds {
		t.Fatalf("%d iterates folded before the rollback, %d after, the engine's count %d; want some before, and the count the steps from the rollback's on", before, folds, e.meanN)
	}
	for i, m := range e.mean {
		if w := sum[i] / float64(folds); math.Abs(m-w) > 1e-9*(1+math.Abs(w)) {
			t.Fatalf("parameter %d: the engine's average %v, from the rollback on %v", i, m, w)
		}
	}
}
