package schedule_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
	"github.com/salsaopt/salsa/stats"
)

// sslsThenSASAPlus is SALSA with the switch at a fixed step, assembled from
// the public APIs of SSLS and SASA+ only: SSLS chooses α for steps 1..k while
// SASA+ (with warmup k, so that it cannot drop yet) is told that α with
// SetLR and collects Δ; from step k+1 SASA+ schedules alone.
type sslsThenSASAPlus struct {
	schedule.Scheduler // unused methods
	ssls               *schedule.SSLS
	plus               *schedule.SASAPlus
	k                  int
}

func (m *sslsThenSASAPlus) Step() int   { return m.plus.Step() }
func (m *sslsThenSASAPlus) LR() float64 { return m.plus.LR() }
func (m *sslsThenSASAPlus) Name() string {
	return "ssls-then-sasa+"
}

func (m *sslsThenSASAPlus) Begin(loss, gd float64) (schedule.Request, error) {
	if m.plus.Step() >= m.k {
		return m.plus.Begin(loss, gd)
	}
	return m.ssls.Begin(loss, gd)
}

func (m *sslsThenSASAPlus) Trial(f float64) (schedule.Request, error) {
	req, err := m.ssls.Trial(f)
	if err == nil && !req.Eval {
		err = m.plus.SetLR(req.LR)
		if err == nil {
			_, err = m.plus.Begin(0, 0)
		}
	}
	return req, err
}

func (m *sslsThenSASAPlus) End(obs schedule.Observation) (schedule.Result, error) {
	if m.plus.Step() >= m.k {
		return m.plus.End(obs)
	}
	r1, err := m.ssls.End(obs)
	if err != nil {
		return r1, err
	}
	r2, err := m.plus.End(obs)
	r2.Searched, r2.Eta = true, r1.Eta
	return r2, err
}

// TestSALSAForcedSwitchIsSSLSThenSASAPlus: SALSA with the switch forced at
// step k (and neither automatic rule) equals SSLS for steps 1..k, then SASA+.
func TestSALSAForcedSwitchIsSSLSThenSASAPlus(t *testing.T) {
	const steps, k = 600, 150
	c := small(schedule.PresetPaper)
	sc := c.SALSA()
	sc.ForceSwitchAt, sc.NoSlopeSwitch, sc.NoStationaritySwitch = k, true, true
	salsa, err := schedule.NewSALSA(sc)
	if err != nil {
		t.Fatal(err)
	}
	ssls, _ := schedule.NewSSLS(c.SSLS)
	pc := c.SASAPlus
	pc.LR0, pc.DropAfter = c.SSLS.LR0, k
	plus, err := schedule.NewSASAPlus(pc)
	if err != nil {
		t.Fatal(err)
	}
	manual := &sslsThenSASAPlus{ssls: ssls, plus: plus, k: k}

	p, q := schedtest.NewProblem(9, steps), schedtest.NewProblem(9, steps)
	drops := 0
	for j := 1; j <= steps; j++ {
		a, err := p.Step(salsa, j)
		if err != nil {
			t.Fatal(err)
		}
		b, err := q.Step(manual, j)
		if err != nil {
			t.Fatal(err)
		}
		if j == k {
			n := len(a.Events)
			if n == 0 || a.Events[n-1].Kind != schedule.KindSwitch || a.Events[n-1].Reason != "forced" {
				t.Fatalf("step %d: events %v, want a forced switch last", j, a.Events)
			}
			a.Events = a.Events[:n-1]
			if len(a.Events) == 0 {
				a.Events = nil
			}
		}
		if j > k {
			b.Searched, b.Eta = false, 0
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d:\nSALSA  %+v\nmanual %+v", j, a, b)
		}
		for _, e := range a.Events {
			if e.Kind == schedule.KindDrop {
				drops++
			}
		}
	}
	if sw, why, at := salsa.Switched(); !sw || why != "forced" || at != k {
		t.Errorf("Switched() = %v %q %d", sw, why, at)
	}
	if drops == 0 {
		t.Error("no drop after the switch: the comparison did not cover SASA+'s decisions")
	}
}

// TestSASAPlusBuiltInAnyPhase builds SASA+ with a full window (optax style:
// state is a typed value) and steps once to see the test fire and drop.
func TestSASAPlusBuiltInAnyPhase(t *testing.T) {
	cfg := schedule.SASAPlusConfig{LR0: 1, Theta: 1, Delta: 0.05, Tau: 0.1, NMin: 3, KTest: 1, Variance: stats.IID}
	s, err := schedule.NewSASAPlus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Δ alternating ±1 around 0: the interval contains 0.
	st := schedule.SASAPlusState{Step: 9, LR: 0.5, Window: stats.WindowState{Theta: 1, Total: 9, Values: []float64{1, -1, 1, -1, 1, -1, 1, -1, 1}}}
	if err := s.SetState(st); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(0, 0); err != nil {
		t.Fatal(err)
	}
	res, err := s.End(schedule.Observation{X1D: -1.25, D2: 1}) // Δ = −1.25 + 0.5/2·1 = −1
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Events) != 2 || res.Events[0].Kind != schedule.KindTest || !res.Events[0].Stationary ||
		res.Events[0].Count != 10 || res.Events[0].Mean != 0 || res.Events[1].Kind != schedule.KindDrop ||
		res.Events[1].NewLR != 0.05 || !res.ResetMomentum || res.NextLR != 0.05 || res.LR != 0.5 {
		t.Fatalf("result %+v", res)
	}
	if got := s.State(); got.Window.Total != 0 || got.Drops != 1 || got.Step != 10 {
		t.Errorf("after the drop: %+v, want an empty window, 1 drop, step 10", got)
	}
	// A state whose window θ differs from the configuration's is refused.
	st.Window.Theta = 0.5
	if err := s.SetState(st); err == nil {
		t.Error("SetState accepted a window with another θ")
	}
}

// TestDivideMatchesDropFactor: statopt divides by drop_factor; the preset
// keeps τ = 1/drop_factor and must give the same doubles for every integer
// factor (1/(1/49) alone is 49.00000000000001), so that repeated drops give
// statopt's 1.0000000000000002e-06.
func TestDivideMatchesDropFactor(t *testing.T) {
	for f := 2.0; f <= 1e6; f = math.Max(f+1, math.Round(f*1.01)) {
		c, err := schedule.NewCut(schedule.CutConfig{LR0: 0.3, Tau: 1 / f, DropSteps: []int{1, 2}, DivideLR: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			c.Begin(0, 0)
			c.End(schedule.Observation{})
		}
		if want := 0.3 / f / f; c.LR() != want {
			t.Fatalf("drop_factor %v: %v, want %v", f, c.LR(), want)
		}
	}
	c, _ := schedule.NewCut(schedule.CutConfig{LR0: 0.1, Tau: 0.1, DropSteps: []int{1, 2, 3, 4, 5}, DivideLR: true})
	for range 5 {
		c.Begin(0, 0)
		c.End(schedule.Observation{})
	}
	if c.LR() != 1.0000000000000002e-06 {
		t.Errorf("0.1 divided by 10 five times = %v, want statopt's 1.0000000000000002e-06", c.LR())
	}
	// A factor near an integer but not within ulps of one is not rounded:
	// τ close to 1 still drops, and 1/(1e9+0.4) is not 1e-9.
	for _, tau := range []float64{0.9999999999, 1 / (1e9 + 0.4)} {
		c, err := schedule.NewCut(schedule.CutConfig{LR0: 1, Tau: tau, DropSteps: []int{1}, DivideLR: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Begin(0, 0)
		c.End(schedule.Observation{})
		if want := 1 / (1 / tau); c.LR() != want {
			t.Errorf("τ = %v: after the drop α = %v, want %v", tau, c.LR(), want)
		}
	}
}

// TestWithValidation: drop when the validation loss has not improved for
// more than Patience checks, whichever comes first with the inner test.
func TestWithValidation(t *testing.T) {
	in, _ := schedule.NewConstant(schedule.ConstantConfig{LR: 20, Tau: 0.25})
	v, err := schedule.NewWithValidation(in, schedule.ValidationConfig{Patience: 1})
	if err != nil {
		t.Fatal(err)
	}
	table := []struct {
		loss     float64
		wantBad  int
		wantDrop bool
		wantLR   float64
	}{
		{5, 0, false, 20}, {4, 0, false, 20}, {4.5, 1, false, 20}, {4.2, 0, true, 5}, // 2 bad in a row > patience 1
		{3, 0, false, 5}, {3, 1, false, 5}, {3.1, 0, true, 1.25},
	}
	for i, row := range table {
		res, err := v.Validate(row.loss)
		if err != nil {
			t.Fatal(err)
		}
		ev := res.Events[0]
		dropped := len(res.Events) == 2 && res.Events[1].Kind == schedule.KindDrop && res.Events[1].Reason == "validation"
		bad := ev.Bad
		if dropped {
			bad = 0
		}
		if ev.Kind != schedule.KindValidation || dropped != row.wantDrop || v.LR() != row.wantLR || (bad != row.wantBad && !dropped) {
			t.Fatalf("check %d (loss %v): events %+v, lr %v; want drop %v, lr %v, bad %d", i, row.loss, res.Events, v.LR(), row.wantDrop, row.wantLR, row.wantBad)
		}
	}
	if _, err := v.Validate(nanf()); err == nil {
		t.Error("Validate(NaN) accepted")
	}
}

func nanf() float64 { var z float64; return z / z }
