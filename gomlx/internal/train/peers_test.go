package train

import (
	"slices"
	"testing"

	"github.com/salsaopt/salsa/gomlx/linear"
	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
)

// TestPeersTable: every peer is a --method, runs the scheduler of its row
// (which replay.Scheduler agrees with) with the direction of its row, and
// the budgeted ones get --epochs × the steps of an epoch.
func TestPeersTable(t *testing.T) {
	for _, m := range Peers {
		if !slices.Contains(Methods, m.Name) {
			t.Errorf("%s: not in Methods", m.Name)
		}
		s, err := replay.Scheduler(m.Name)
		if err != nil || s != m.Scheduler {
			t.Errorf("%s: replay.Scheduler %q, %v; the table has %q", m.Name, s, err, m.Scheduler)
		}
		p := plan(t, m.Name, 640)
		if p.Scheduler != m.Scheduler || p.Direction.Kind != m.Direction {
			t.Errorf("%s: plan runs %s with %s, the table says %s with %s", m.Name, p.Scheduler, p.Direction.Kind, m.Scheduler, m.Direction)
		}
		budget := p.Options.Epochs * p.StepsPerEpoch
		warm := int(float64(budget)*m.Warmup + 0.5)
		switch m.Scheduler {
		case "cosine":
			if c := p.Schedule.Cosine; c.Steps != budget || c.WarmupSteps != warm || c.LR != p.Options.LR0 {
				t.Errorf("%s: %+v, want budget %d, warmup %d", m.Name, c, budget, warm)
			}
		case "wsd":
			if c := p.Schedule.WSD; c.Steps != budget || c.WarmupSteps != warm || c.DecayFraction != 0.2 {
				t.Errorf("%s: %+v, want budget %d, warmup %d", m.Name, c, budget, warm)
			}
		case "warmup":
			if c := p.Schedule.Warmup; c.Steps != warm || c.LR != m.LR0 || len(c.DropSteps) != 0 {
				t.Errorf("%s: %+v, want warmup %d at %v", m.Name, c, warm, m.LR0)
			}
		case "constant":
			if p.Schedule.Constant.LR != m.LR0 {
				t.Errorf("%s: constant at %v, want %v", m.Name, p.Schedule.Constant.LR, m.LR0)
			}
		}
		if (p.ValFraction > 0) != m.Val {
			t.Errorf("%s: val fraction %v", m.Name, p.ValFraction)
		}
	}
}

// TestPeerEvaluationPoint: Schedule-Free is evaluated at x and DoG at its
// polynomial average, and the evaluation leaves the training parameters (y
// for Schedule-Free) bit for bit as they were.
func TestPeerEvaluationPoint(t *testing.T) {
	tr, test := synth(640, 24, 1), synth(200, 24, 2)
	for _, method := range []string{"schedule-free-sgd", "schedule-free-adamw", "dog"} {
		p := plan(t, method, tr.N())
		eng, err := newNativeEngine(p, tr)
		if err != nil {
			t.Fatal(err)
		}
		e := eng.(*nativeEngine)
		s, err := schedule.New(p.Scheduler, p.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		perm := Perm(1, 1, tr.N())
		for k := range 15 {
			if _, err := e.Step(s, Batch{Idx: perm[k*32 : (k+1)*32], Epoch: 1, Step: k + 1}); err != nil {
				t.Fatal(err)
			}
		}
		y := slices.Clone(e.t.X)
		loss, acc, err := e.Evaluate(test)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(y, e.t.X) {
			t.Fatalf("%s: the evaluation changed the training parameters", method)
		}
		var at []float32 // where the method says to evaluate
		if e.sf != nil {
			at = e.sf.X()
		} else {
			at = e.avg.Average()
		}
		ref, _ := linear.New(linear.Config{In: tr.Dim, Out: tr.Labels})
		copy(ref.X, at)
		wl, wa, _ := ref.Evaluate(test.X, test.Y)
		copy(ref.X, y)
		yl, _, _ := ref.Evaluate(test.X, test.Y)
		if loss != wl || acc != wa || loss == yl {
			t.Errorf("%s: evaluated loss %v acc %v; at the evaluation point %v %v, at the training point %v", method, loss, acc, wl, wa, yl)
		}
	}
}
