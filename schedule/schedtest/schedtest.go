// Package schedtest is the test suite every schedule.Scheduler must pass, in
// the manner of testing/slogtest: the protocol order, the rejection of
// non-finite inputs without a change of state, failed steps (statistics that
// overflow) that leave the state as it was, determinism, and snapshots that
// resume with identical decisions.
package schedtest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/salsaopt/salsa/schedule"
)

// Run runs the suite on schedulers made by mk, which must return a fresh
// scheduler at step 0 on each call. Give it a configuration whose tests fall
// due within a few hundred steps (small N_min and K_test), so that the suite
// sees drops and switches; Steps is how many steps it drives (default 600).
func Run(t *testing.T, mk func() schedule.Scheduler, steps int) {
	if steps <= 0 {
		steps = 600
	}
	t.Run("Protocol", func(t *testing.T) { testProtocol(t, mk) })
	t.Run("NonFinite", func(t *testing.T) { testNonFinite(t, mk, steps) })
	t.Run("Deterministic", func(t *testing.T) { testDeterministic(t, mk, steps) })
	t.Run("Resume", func(t *testing.T) { testResume(t, mk, steps) })
	t.Run("Invariants", func(t *testing.T) { testInvariants(t, mk, steps) })
	t.Run("Atomic", func(t *testing.T) { testAtomic(t, mk, steps) })
	t.Run("Val", func(t *testing.T) { testVal(t, mk, steps) })
}

// Problem is a noisy quadratic f_ξ(x) = ½Σ h_i (x_i − ξ_i)², minimized by
// SGD with dampened heavy-ball momentum, which reaches a stationary
// distribution at a constant rate: SASA+ eventually drops on it and SSLS
// finds a stable rate.
type Problem struct {
	X, H, Mom []float64
	Noise     [][]float64 // ξ for each step
	Beta      float64
}

// NewProblem returns the problem with a pre-drawn noise sequence.
func NewProblem(seed uint64, steps int) *Problem {
	r := rand.New(rand.NewPCG(seed, 7))
	p := &Problem{X: []float64{3, -2, 1, 4}, H: []float64{1, 0.5, 2, 0.2}, Mom: make([]float64, 4), Beta: 0.9}
	for range steps + 1 {
		xi := make([]float64, len(p.X))
		for i := range xi {
			xi[i] = 0.5 * r.NormFloat64()
		}
		p.Noise = append(p.Noise, xi)
	}
	return p
}

// Clone deep-copies the problem state.
func (p *Problem) Clone() *Problem {
	q := *p
	q.X = append([]float64(nil), p.X...)
	q.Mom = append([]float64(nil), p.Mom...)
	return &q
}

func (p *Problem) loss(x, xi []float64) float64 {
	f := 0.0
	for i := range x {
		d := x[i] - xi[i]
		f += 0.5 * p.H[i] * d * d
	}
	return f
}

// Step runs step k (1-based) of the protocol on s.
func (p *Problem) Step(s schedule.Scheduler, k int) (schedule.Result, error) {
	xi, g, loss, gd := p.gradient(k)
	req, err := s.Begin(loss, gd)
	if err != nil {
		return schedule.Result{}, err
	}
	for req.Eval {
		if req, err = s.Trial(p.trialLoss(xi, g, req.Eta)); err != nil {
			return schedule.Result{}, err
		}
	}
	res, err := s.End(p.update(g, req.LR))
	if err != nil {
		return res, err
	}
	if res, err = p.ReportVal(s, res); err != nil {
		return res, err
	}
	if res.ResetMomentum {
		clear(p.Mom)
	}
	return res, nil
}

// ValLoss is the problem's validation loss at the parameters, its loss at
// ξ = 0.
func (p *Problem) ValLoss() float64 { return p.loss(p.X, make([]float64, len(p.X))) }

// ReportVal reports the validation loss to s when res, its End's Result,
// asks for it ([schedule.Result.NeedVal]), and returns the step's Result;
// otherwise it returns res. It is an error for a scheduler to ask when it
// is not a [schedule.ValAsker] whose AsksVal is true.
func (p *Problem) ReportVal(s schedule.Scheduler, res schedule.Result) (schedule.Result, error) {
	if res.NeedVal && !schedule.AsksVal(s) {
		return res, fmt.Errorf("%s: step %d: End set NeedVal, but the scheduler does not ask for validation losses (ValAsker.AsksVal)", s.Name(), res.Step)
	}
	return schedule.AnswerVal(s, res, func() (float64, error) { return p.ValLoss(), nil })
}

// gradient returns the noise of step k, the gradient g_k, the loss f(x_k)
// and gd = ‖g_k‖².
func (p *Problem) gradient(k int) (xi, g []float64, loss, gd float64) {
	xi = p.Noise[k%len(p.Noise)]
	g = make([]float64, len(p.X))
	for i := range g {
		g[i] = p.H[i] * (p.X[i] - xi[i])
		gd += g[i] * g[i]
	}
	return xi, g, p.loss(p.X, xi), gd
}

// trialLoss is f(x_k − η·g_k) on the same noise.
func (p *Problem) trialLoss(xi, g []float64, eta float64) float64 {
	trial := make([]float64, len(p.X))
	for i := range trial {
		trial[i] = p.X[i] - eta*g[i]
	}
	return p.loss(trial, xi)
}

// update makes the momentum step with learning rate lr and returns its
// statistics.
func (p *Problem) update(g []float64, lr float64) schedule.Observation {
	var obs schedule.Observation
	for i := range g {
		p.Mom[i] = p.Beta*p.Mom[i] + (1-p.Beta)*g[i]
		d := p.Mom[i]
		p.X[i] -= lr * d
		obs.X1D += p.X[i] * d
		obs.D2 += d * d
		obs.X2 += p.X[i] * p.X[i]
	}
	return obs
}

func drive(t *testing.T, s schedule.Scheduler, p *Problem, from, to int) []schedule.Result {
	t.Helper()
	var out []schedule.Result
	for k := from; k <= to; k++ {
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatalf("%s: step %d: %v", s.Name(), k, err)
		}
		out = append(out, res)
	}
	return out
}

func testProtocol(t *testing.T, mk func() schedule.Scheduler) {
	s := mk()
	if s.Name() == "" {
		t.Error("Name is empty")
	}
	if _, err := s.End(schedule.Observation{}); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("End before Begin: err = %v, want ErrPhase", err)
	}
	if _, err := s.Trial(1); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("Trial before Begin: err = %v, want ErrPhase", err)
	}
	req, err := s.Begin(1, 1)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if _, err := s.Begin(1, 1); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("Begin twice: err = %v, want ErrPhase", err)
	}
	if _, err := s.MarshalBinary(); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("MarshalBinary while a step is open: err = %v, want ErrPhase", err)
	}
	if v, ok := s.(schedule.Validator); ok {
		// a validation loss worse than none, twice: a drop would be due
		for range 3 {
			if _, err := v.Validate(1e300); !errors.Is(err, schedule.ErrPhase) {
				t.Fatalf("Validate while a step is open: err = %v, want ErrPhase", err)
			}
		}
	}
	if !req.Eval {
		if _, err := s.Trial(1); !errors.Is(err, schedule.ErrPhase) {
			t.Errorf("Trial not asked for: err = %v, want ErrPhase", err)
		}
	} else if _, err := s.End(schedule.Observation{}); !errors.Is(err, schedule.ErrPhase) {
		t.Errorf("End with a trial outstanding: err = %v, want ErrPhase", err)
	}
	s.Abort()
	if s.Step() != 0 {
		t.Errorf("Step after Abort = %d, want 0", s.Step())
	}
	p := NewProblem(1, 3)
	if _, err := p.Step(s, 1); err != nil {
		t.Fatalf("step after Abort: %v", err)
	}
	if s.Step() != 1 {
		t.Errorf("Step = %d, want 1", s.Step())
	}
}

func snap(t *testing.T, s schedule.Scheduler) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	return b
}

func testNonFinite(t *testing.T, mk func() schedule.Scheduler, steps int) {
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	s := mk()
	p := NewProblem(2, steps)
	for k := 1; k <= steps; k++ {
		if k%97 == 1 || k == steps {
			before := snap(t, s)
			for _, v := range bad {
				if _, err := s.Begin(v, 1); !errors.Is(err, schedule.ErrNonFinite) {
					t.Fatalf("step %d: Begin(loss=%v) = %v, want ErrNonFinite", k, v, err)
				}
				if _, err := s.Begin(1, v); !errors.Is(err, schedule.ErrNonFinite) {
					t.Fatalf("step %d: Begin(gd=%v) = %v, want ErrNonFinite", k, v, err)
				}
			}
			req, err := s.Begin(1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if req.Eval {
				if _, err := s.Trial(math.NaN()); !errors.Is(err, schedule.ErrNonFinite) {
					t.Fatalf("step %d: Trial(NaN) = %v, want ErrNonFinite", k, err)
				}
				for req.Eval {
					if req, err = s.Trial(2); err != nil {
						t.Fatal(err)
					}
				}
			}
			// a non-finite input is ErrNonFinite, which a training loop reads
			// as a divergence; a negative ‖d‖² is refused, but is not that
			type bad struct {
				o         schedule.Observation
				nonFinite bool
			}
			bads := []bad{
				{schedule.Observation{X1D: math.NaN()}, true}, {schedule.Observation{X1D: math.Inf(1)}, true},
				{schedule.Observation{D2: math.NaN()}, true}, {schedule.Observation{D2: math.Inf(1)}, true},
				{schedule.Observation{D2: -1}, false},
			}
			if schedule.AsksNorm(s) {
				// ‖x_{k+1}‖², read by a NormAsker
				bads = append(bads, bad{schedule.Observation{X2: math.NaN()}, true}, bad{schedule.Observation{X2: math.Inf(1)}, true},
					bad{schedule.Observation{X2: -1}, false})
			}
			for _, c := range bads {
				_, err := s.End(c.o)
				if err == nil {
					t.Fatalf("step %d: End(%+v) accepted", k, c.o)
				}
				if got := errors.Is(err, schedule.ErrNonFinite); got != c.nonFinite {
					t.Fatalf("step %d: End(%+v) = %v: errors.Is(err, ErrNonFinite) = %v, want %v", k, c.o, err, got, c.nonFinite)
				}
			}
			s.Abort()
			if after := snap(t, s); !bytes.Equal(before, after) {
				t.Fatalf("step %d: rejected inputs changed the state:\n%s\n%s", k, before, after)
			}
		}
		if _, err := p.Step(s, k); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
	}
}

func testDeterministic(t *testing.T, mk func() schedule.Scheduler, steps int) {
	a := drive(t, mk(), NewProblem(3, steps), 1, steps)
	b := drive(t, mk(), NewProblem(3, steps), 1, steps)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs on the same inputs differ")
	}
}

func testResume(t *testing.T, mk func() schedule.Scheduler, steps int) {
	for _, m := range []int{1, steps / 3, steps / 2, steps - 1} {
		s := mk()
		p := NewProblem(4, steps)
		drive(t, s, p, 1, m)
		data := snap(t, s)
		q := p.Clone()
		want := drive(t, s, p, m+1, steps)

		r, err := schedule.Restore(data)
		if err != nil {
			t.Fatalf("Restore at step %d: %v", m, err)
		}
		if r.Name() != s.Name() || r.Step() != m {
			t.Fatalf("Restore at step %d: %s at step %d, want %s at step %d", m, r.Name(), r.Step(), s.Name(), m)
		}
		if again := snap(t, r); !bytes.Equal(again, data) {
			t.Fatalf("snapshot of the restored scheduler differs:\n%s\n%s", data, again)
		}
		got := drive(t, r, q, m+1, steps)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("resumed at step %d: decisions differ from the uninterrupted run", m)
		}
		// Into an existing value of the same type, too.
		z := mk()
		if err := z.UnmarshalBinary(data); err != nil {
			t.Fatalf("UnmarshalBinary into a fresh value: %v", err)
		}
		if !bytes.Equal(snap(t, z), data) {
			t.Fatal("UnmarshalBinary into a fresh value gives another state")
		}
	}
	if err := mk().UnmarshalBinary([]byte(`{"version":99}`)); err == nil {
		t.Error("UnmarshalBinary accepted version 99")
	}
}

// testInvariants checks each step's Result: its step and rates, its events,
// and the protocol of the parameters' copies (Save, Confirm, Rollback,
// Release).
func testInvariants(t *testing.T, mk func() schedule.Scheduler, steps int) {
	s := mk()
	p := NewProblem(5, steps)
	kept, released := false, false // the copy a Confirm keeps
	earlier := false               // the copy a KeepEarlier keeps
	saved := -1                    // the step of the last Save
	averaging := false             // a step has set Average
	for k := 1; k <= steps; k++ {
		lr := s.LR()
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		if err := res.CheckEarlier(); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		// the copies' protocol: a Save, its Confirm at the same step or the
		// next, then Rollback or Release only of a copy kept, and nothing
		// after the Release
		switch {
		case (res.Save || res.Confirm || res.Rollback) && released:
			t.Fatalf("step %d: Save %v, Confirm %v, Rollback %v after the copies were released", k, res.Save, res.Confirm, res.Rollback)
		case res.Save && (res.Rollback || res.Release):
			t.Fatalf("step %d: Save with Rollback %v, Release %v", k, res.Rollback, res.Release)
		case res.Confirm && !res.Save && saved != k-1:
			t.Fatalf("step %d: Confirm without a Save at this step or the last (the last at step %d)", k, saved)
		case (res.Rollback || res.Release) && !(kept || res.Confirm):
			t.Fatalf("step %d: Rollback %v, Release %v with no copy kept", k, res.Rollback, res.Release)
		case res.Rollback && !res.ResetMomentum:
			t.Fatalf("step %d: Rollback without ResetMomentum", k)
		case res.RollbackEarlier && !(earlier || res.KeepEarlier && kept):
			t.Fatalf("step %d: RollbackEarlier with no earlier copy kept", k)
		}
		if res.Confirm && res.KeepEarlier && kept {
			earlier = true
		}
		if res.Save {
			saved = k
		}
		if res.Confirm {
			kept, saved = true, -1
		}
		released = released || res.Release
		// the average of the decay: only a scheduler that says it averages
		// asks for it, and once it has begun it goes on at every step
		switch {
		case res.Average && !schedule.Averages(s):
			t.Fatalf("step %d: Average set by a scheduler that does not average (Averages)", k)
		case averaging && !res.Average:
			t.Fatalf("step %d: Average off after a step that set it: the average of the decay has a gap", k)
		}
		averaging = averaging || res.Average
		if res.Step != k || s.Step() != k {
			t.Fatalf("step %d: Result.Step = %d, Step() = %d", k, res.Step, s.Step())
		}
		if !(res.LR > 0) || math.IsInf(res.LR, 0) || !(res.NextLR > 0) {
			t.Fatalf("step %d: LR = %v, NextLR = %v: must be finite and > 0", k, res.LR, res.NextLR)
		}
		if res.NextLR != s.LR() {
			t.Fatalf("step %d: NextLR = %v but LR() = %v", k, res.NextLR, s.LR())
		}
		if !res.Searched && !s.Searching() && res.LR != lr {
			t.Fatalf("step %d: used LR %v, but LR() said %v before the step", k, res.LR, lr)
		}
		for _, e := range res.Events {
			if e.Step != k {
				t.Fatalf("step %d: event %v has step %d", k, e.Kind, e.Step)
			}
			if e.Kind.String() == "" || e.Kind == 0 {
				t.Fatalf("step %d: event of unknown kind %d", k, e.Kind)
			}
			if e.Kind == schedule.KindDrop && !(e.NewLR < res.LR) {
				t.Fatalf("step %d: drop to %v from %v", k, e.NewLR, res.LR)
			}
		}
	}
}

// Finite inputs whose statistics overflow float64: a loss or a Δ whose
// square (in a window's variance or a slope's covariance) is +Inf, and an
// observation whose Δ = X1D + (α/2)·D2 itself overflows.
const hugeLoss = 1e308

var overflowing = []schedule.Observation{
	{X1D: 1e308, D2: 0},
	{X1D: -1e308, D2: 0},
	{X1D: math.MaxFloat64, D2: math.MaxFloat64},
}

// testAtomic checks the error contract of End on overflow: a failed End
// leaves the state exactly as before the call. At every step it drives s and
// an unaffected twin on the same problem, and
//
//   - opens the step on s with a huge loss (the SLOPE tests' input): if End
//     fails, the step is still open and after Abort the snapshot is the one
//     before Begin;
//   - opens the step on both, then ends it on s with each overflowing
//     observation first: if End fails, the step is still open; then calls
//     Begin on s again with another loss, which must fail with ErrPhase; the
//     End that follows with the real observation must give exactly the
//     twin's result and snapshot.
//
// Where End accepts an input (no test was due, or the scheduler has no
// statistics), s restarts from the snapshot taken before.
func testAtomic(t *testing.T, mk func() schedule.Scheduler, steps int) {
	s, twin := mk(), mk()
	p := NewProblem(6, steps)
	restore := func(data []byte) schedule.Scheduler {
		t.Helper()
		r, err := schedule.Restore(data)
		if err != nil {
			t.Fatalf("Restore: %v", err)
		}
		return r
	}
	stillOpen := func(k int, what string) {
		t.Helper()
		if _, err := s.MarshalBinary(); !errors.Is(err, schedule.ErrPhase) {
			t.Fatalf("step %d: after the failed End (%s) the step is not open: MarshalBinary err = %v", k, what, err)
		}
	}
	rejected := 0
	for k := 1; k <= steps; k++ {
		before := snap(t, s)
		if !bytes.Equal(before, snap(t, twin)) {
			t.Fatalf("step %d: the scheduler and its twin differ before the step", k)
		}

		// A huge loss at Begin.
		req, err := s.Begin(hugeLoss, 1)
		if err != nil {
			t.Fatalf("step %d: Begin(loss=%v): %v", k, hugeLoss, err)
		}
		for req.Eval && err == nil {
			req, err = s.Trial(1)
		}
		if err != nil {
			t.Fatalf("step %d: Trial: %v", k, err)
		}
		if _, err := s.End(schedule.Observation{X1D: 0.01, D2: 1e-4}); err != nil {
			rejected++
			stillOpen(k, "huge loss")
			s.Abort()
			if after := snap(t, s); !bytes.Equal(before, after) {
				t.Fatalf("step %d: a failed End (loss %v) changed the state:\nbefore %s\nafter  %s", k, hugeLoss, before, after)
			}
		} else {
			s = restore(before)
		}

		// The step, opened on both; overflowing observations tried on s first.
		xi, g, loss, gd := p.gradient(k)
		var trials []float64
		treq, err := twin.Begin(loss, gd)
		for err == nil && treq.Eval {
			f := p.trialLoss(xi, g, treq.Eta)
			trials = append(trials, f)
			treq, err = twin.Trial(f)
		}
		if err != nil {
			t.Fatalf("step %d: twin: %v", k, err)
		}
		open := func() {
			t.Helper()
			req, err := s.Begin(loss, gd)
			for i := 0; err == nil && i < len(trials); i++ {
				req, err = s.Trial(trials[i])
			}
			if err != nil || req != treq {
				t.Fatalf("step %d: reopening the step: request %+v, err %v; twin's %+v", k, req, err, treq)
			}
		}
		open()
		for _, o := range overflowing {
			if _, err := s.End(o); err != nil {
				rejected++
				stillOpen(k, fmt.Sprintf("%+v", o))
				continue
			}
			s = restore(before)
			open()
		}
		// Begin again while the step is open, with another loss: rejected,
		// and the open step keeps its own loss.
		if _, err := s.Begin(2*loss+1, gd); !errors.Is(err, schedule.ErrPhase) {
			t.Fatalf("step %d: Begin while the step is open: err = %v, want ErrPhase", k, err)
		}
		obs := p.update(g, treq.LR)
		want, err := twin.End(obs)
		if err != nil {
			t.Fatalf("step %d: twin: End: %v", k, err)
		}
		if want, err = p.ReportVal(twin, want); err != nil {
			t.Fatalf("step %d: twin: %v", k, err)
		}
		got, err := s.End(obs)
		if err == nil {
			got, err = p.ReportVal(s, got)
		}
		if err != nil {
			t.Fatalf("step %d: End after the failed ones: %v", k, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: after failed Ends the step gives\n%+v\nwant the twin's\n%+v", k, got, want)
		}
		if a, b := snap(t, s), snap(t, twin); !bytes.Equal(a, b) {
			t.Fatalf("step %d: after failed Ends the state differs from the twin's:\n%s\n%s", k, a, b)
		}
		if want.ResetMomentum {
			clear(p.Mom)
		}
	}
	t.Logf("%s: %d overflowing inputs rejected in %d steps", s.Name(), rejected, steps)
}

// testVal checks, for a scheduler that asks for validation losses
// ([schedule.ValAsker]), the wait between an End that asks and ReportVal:
// Begin, End and MarshalBinary return ErrPhase, Abort leaves the step
// waiting, a non-finite loss is rejected and leaves it waiting, and the run
// then decides exactly as an undisturbed one. ReportVal when nothing was
// asked returns ErrPhase. A scheduler that never asks only has the last
// checked.
func testVal(t *testing.T, mk func() schedule.Scheduler, steps int) {
	s, twin := mk(), mk()
	va, ok := s.(schedule.ValAsker)
	if ok {
		if _, err := va.ReportVal(1); !errors.Is(err, schedule.ErrPhase) {
			t.Errorf("ReportVal before any step: err = %v, want ErrPhase", err)
		}
	}
	if !ok || !va.AsksVal() {
		return
	}
	p, q := NewProblem(8, steps), NewProblem(8, steps)
	asked := 0
	for k := 1; k <= steps; k++ {
		want, err := q.Step(twin, k)
		if err != nil {
			t.Fatalf("step %d: twin: %v", k, err)
		}
		xi, g, loss, gd := p.gradient(k)
		req, err := s.Begin(loss, gd)
		for err == nil && req.Eval {
			req, err = s.Trial(p.trialLoss(xi, g, req.Eta))
		}
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		res, err := s.End(p.update(g, req.LR))
		if err != nil {
			t.Fatalf("step %d: End: %v", k, err)
		}
		if res.NeedVal {
			asked++
			if res.Step != k || res.Events != nil || res.Save || res.Confirm || res.Rollback || res.Release || res.ResetMomentum {
				t.Fatalf("step %d: End asking for the validation loss returned more than Step, LR and NeedVal: %+v", k, res)
			}
			if _, err := s.Begin(1, 1); !errors.Is(err, schedule.ErrPhase) {
				t.Fatalf("step %d: Begin while waiting: err = %v, want ErrPhase", k, err)
			}
			if _, err := s.End(schedule.Observation{}); !errors.Is(err, schedule.ErrPhase) {
				t.Fatalf("step %d: End while waiting: err = %v, want ErrPhase", k, err)
			}
			if _, err := s.MarshalBinary(); !errors.Is(err, schedule.ErrPhase) {
				t.Fatalf("step %d: MarshalBinary while waiting: err = %v, want ErrPhase", k, err)
			}
			s.Abort()
			for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				if _, err := va.ReportVal(v); err == nil {
					t.Fatalf("step %d: ReportVal(%v) accepted", k, v)
				}
			}
			if res, err = va.ReportVal(p.ValLoss()); err != nil {
				t.Fatalf("step %d: ReportVal: %v", k, err)
			}
			if _, err := va.ReportVal(p.ValLoss()); !errors.Is(err, schedule.ErrPhase) {
				t.Fatalf("step %d: a second ReportVal: err = %v, want ErrPhase", k, err)
			}
		}
		if !reflect.DeepEqual(res, want) {
			t.Fatalf("step %d: after the wait the step gives\n%+v\nwant\n%+v", k, res, want)
		}
		if res.ResetMomentum {
			clear(p.Mom)
		}
	}
	if asked == 0 {
		t.Errorf("%s asks for validation losses (AsksVal), but did not in %d steps", s.Name(), steps)
	}
	t.Logf("%s: %d validation losses asked for in %d steps", s.Name(), asked, steps)
}
