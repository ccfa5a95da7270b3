// Package schedtest is the test suite every schedule.Scheduler must pass, in
// the manner of testing/slogtest: the protocol order, the rejection of
// non-finite inputs without a change of state, determinism, and snapshots that
// resume with identical decisions.
package schedtest

import (
	"bytes"
	"errors"
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
	xi := p.Noise[k%len(p.Noise)]
	n := len(p.X)
	g := make([]float64, n)
	gg := 0.0
	for i := range g {
		g[i] = p.H[i] * (p.X[i] - xi[i])
		gg += g[i] * g[i]
	}
	req, err := s.Begin(p.loss(p.X, xi), gg)
	if err != nil {
		return schedule.Result{}, err
	}
	trial := make([]float64, n)
	for req.Eval {
		for i := range trial {
			trial[i] = p.X[i] - req.Eta*g[i]
		}
		if req, err = s.Trial(p.loss(trial, xi)); err != nil {
			return schedule.Result{}, err
		}
	}
	x1d, d2 := 0.0, 0.0
	d := make([]float64, n)
	for i := range d {
		p.Mom[i] = p.Beta*p.Mom[i] + (1-p.Beta)*g[i]
		d[i] = p.Mom[i]
		p.X[i] -= req.LR * d[i]
		x1d += p.X[i] * d[i]
		d2 += d[i] * d[i]
	}
	res, err := s.End(schedule.Observation{X1D: x1d, D2: d2})
	if err != nil {
		return res, err
	}
	if res.ResetMomentum {
		clear(p.Mom)
	}
	return res, nil
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
				if _, err := s.Begin(v, 1); err == nil {
					t.Fatalf("step %d: Begin(loss=%v) accepted", k, v)
				}
				if _, err := s.Begin(1, v); err == nil {
					t.Fatalf("step %d: Begin(gd=%v) accepted", k, v)
				}
			}
			req, err := s.Begin(1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if req.Eval {
				if _, err := s.Trial(math.NaN()); err == nil {
					t.Fatalf("step %d: Trial(NaN) accepted", k)
				}
				for req.Eval {
					if req, err = s.Trial(2); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, o := range []schedule.Observation{{X1D: math.NaN()}, {X1D: math.Inf(1)}, {D2: math.NaN()}, {D2: math.Inf(1)}, {D2: -1}} {
				if _, err := s.End(o); err == nil {
					t.Fatalf("step %d: End(%+v) accepted", k, o)
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

func testInvariants(t *testing.T, mk func() schedule.Scheduler, steps int) {
	s := mk()
	p := NewProblem(5, steps)
	for k := 1; k <= steps; k++ {
		lr := s.LR()
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
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
