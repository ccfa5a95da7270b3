package schedule_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// TestTailAverage is a trace table of TailConfig.Average on salsa-budget
// with a budget of 400 steps: Average is off before the step the decay
// begins at (its KindDecay event, at the switch and by step 320), and on at
// every step from there to the budget's end, whose rates it does not change; without Average it is never
// set. PickAverage refuses before the decay and without Average, and keeps
// x̄ only when the paired test rejects at δ 0.05 (z > 1.645).
func TestTailAverage(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	c.Tail.Average = true
	s := mustNewTail(t, c)
	off := c
	off.Tail.Average = false
	plain := mustNewTail(t, off)
	if !s.Averages() || plain.Averages() {
		t.Fatalf("Averages: %v with Average, %v without", s.Averages(), plain.Averages())
	}
	if _, err := s.PickAverage([]float64{1, 2, 3}, "loss"); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("PickAverage before the decay: err = %v, want ErrPhase", err)
	}
	p1, p2 := schedtest.NewProblem(4, 400), schedtest.NewProblem(4, 400)
	begin := 0
	for k := 1; k <= 400; k++ {
		r1, err := p1.Step(s, k)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := p2.Step(plain, k)
		if err != nil {
			t.Fatal(err)
		}
		if r2.Average {
			t.Fatalf("step %d: Average without TailConfig.Average", k)
		}
		for _, e := range r1.Events {
			if e.Kind == schedule.KindDecay {
				begin = k
			}
		}
		if want := begin > 0; r1.Average != want {
			t.Fatalf("step %d: Average %v, want %v (the decay began at step %d)", k, r1.Average, want, begin)
		}
		r1.Average = false
		if r1.NextLR != r2.NextLR || r1.LR != r2.LR {
			t.Fatalf("step %d: rates %v→%v with Average, %v→%v without", k, r1.LR, r1.NextLR, r2.LR, r2.NextLR)
		}
	}
	if begin < 1 || begin > 320 {
		t.Errorf("the decay began at step %d, want by step 320", begin)
	}
	if _, err := plain.PickAverage([]float64{1, 2, 3}, "loss"); err == nil || !strings.Contains(err.Error(), "TailConfig.Average is off") {
		t.Errorf("PickAverage without Average: err = %v", err)
	}
	for _, c := range []struct {
		gain []float64
		keep bool
	}{
		{[]float64{1, 2, 3, 4}, true},            // z = 3.87
		{[]float64{0.5, -0.4, 0.3, -0.2}, false}, // z = 0.28
		{[]float64{-1, -2, -3, -4}, false},       // better for the last iterate
	} {
		ev, err := s.PickAverage(c.gain, "loss")
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != schedule.KindAverage || ev.Step != 400 || ev.Count != len(c.gain) || ev.Accept != c.keep || ev.Reason != "loss" {
			t.Errorf("PickAverage(%v) = %+v, want step 400, kept %v", c.gain, ev, c.keep)
		}
	}
	if _, err := s.PickAverage([]float64{1}, "loss"); err == nil || !strings.Contains(err.Error(), "need ≥ 2") {
		t.Errorf("PickAverage of one cell: err = %v", err)
	}
}
