package schedule_test

import (
	"math"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
)

// TestSSLSTraceTable drives SSLS through each branch of Algorithm 2 with
// explicit inputs, as x/time/rate's tests do. c = 0.05, ρ_inc = 2, ρ_dec =
// 1/2, γ = 0.1, m = 2, α_0 = 0.1.
func TestSSLSTraceTable(t *testing.T) {
	type step struct {
		loss, gd float64
		trials   []float64 // answers to the requested trials, in order
		wantEtas []float64 // the η requested
		wantEta  float64   // the η settled on
	}
	thr := func(loss, eta, gd float64) float64 { return loss - 0.05*eta*gd }
	cases := []struct {
		name        string
		acceptEqual bool
		m           int
		steps       []step
	}{
		{"first trial accepted", false, 2, []step{{1, 1, []float64{0.98}, []float64{0.2}, 0.2}}},
		{"second trial accepted", false, 2, []step{{1, 1, []float64{1.5, 0.9}, []float64{0.2, 0.1}, 0.1}}},
		{"both fail: the last decrease is not tested", false, 2, []step{{1, 1, []float64{1.5, 1.5}, []float64{0.2, 0.1}, 0.05}}},
		{"+Inf fails the Armijo test", false, 2, []step{{1, 1, []float64{math.Inf(1), 0.5}, []float64{0.2, 0.1}, 0.1}}},
		{"not a descent direction: ρ_dec·α, no trial", false, 2, []step{{1, 0, nil, nil, 0.05}, {1, -3, nil, nil, 0.05 * 0.95 * 0.5 / 0.95}}},
		{"m = 0: ρ_inc·α untested", false, 0, []step{{1, 1, nil, nil, 0.2}}},
		{"m = 3", false, 3, []step{{1, 1, []float64{2, 2, 2}, []float64{0.2, 0.1, 0.05}, 0.025}}},
		{"equality rejected by Algorithm 2", false, 2, []step{{1, 1, []float64{thr(1, 0.2, 1), 0}, []float64{0.2, 0.1}, 0.1}}},
		{"equality accepted by statopt", true, 2, []step{{1, 1, []float64{thr(1, 0.2, 1)}, []float64{0.2}, 0.2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := schedule.NewSSLS(schedule.SSLSConfig{LR0: 0.1, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: 0.1, M: tc.m, AcceptEqual: tc.acceptEqual})
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.steps {
				prev := s.LR()
				req, err := s.Begin(st.loss, st.gd)
				if err != nil {
					t.Fatal(err)
				}
				var etas []float64
				for j := 0; req.Eval; j++ {
					etas = append(etas, req.Eta)
					if j >= len(st.trials) {
						t.Fatalf("step %d: trial %d at η = %v not in the table", i+1, j+1, req.Eta)
					}
					if req, err = s.Trial(st.trials[j]); err != nil {
						t.Fatal(err)
					}
				}
				if len(etas) != len(st.wantEtas) {
					t.Fatalf("step %d: trials at %v, want %v", i+1, etas, st.wantEtas)
				}
				for j := range etas {
					if math.Abs(etas[j]-st.wantEtas[j]) > 1e-15 {
						t.Fatalf("step %d: trials at %v, want %v", i+1, etas, st.wantEtas)
					}
				}
				wantLR := 0.9*prev + 0.1*st.wantEta
				if st.gd <= 0 {
					wantLR = 0.9*prev + 0.1*0.5*prev
				}
				if math.Abs(req.LR-wantLR) > 1e-15 {
					t.Fatalf("step %d: α = %v, want (1−γ)α_prev + γη = %v", i+1, req.LR, wantLR)
				}
				res, err := s.End(schedule.Observation{X1D: 0, D2: 1})
				if err != nil {
					t.Fatal(err)
				}
				if st.gd > 0 && math.Abs(res.Eta-st.wantEta) > 1e-15 || !res.Searched || res.NextLR != req.LR {
					t.Fatalf("step %d: result %+v, want η %v and NextLR %v", i+1, res, st.wantEta, req.LR)
				}
			}
		})
	}
}

// TestSSLSGrowth checks eq. (17): accepting ρ_inc = 2 at every
// step multiplies α by (1+γ) per step, ≈ e over an epoch of n/b steps with
// γ = b/n.
func TestSSLSGrowth(t *testing.T) {
	const steps = 1000
	s, _ := schedule.NewSSLS(schedule.SSLSConfig{LR0: 1e-3, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: 1.0 / steps, M: 2})
	for range steps {
		req, _ := s.Begin(1, 1)
		for req.Eval {
			req, _ = s.Trial(0)
		}
		if _, err := s.End(schedule.Observation{D2: 1}); err != nil {
			t.Fatal(err)
		}
	}
	got := s.LR() / 1e-3
	want := math.Pow(1+1.0/steps, steps)
	if math.Abs(got-want) > 1e-12*want || math.Abs(got-math.E) > 2e-3 {
		t.Errorf("growth over one epoch = %v, want (1+b/n)^(n/b) = %v ≈ e", got, want)
	}
}

// TestSSLSRateOutOfRange: a rate that would leave float64's range is an
// error that names the step, and leaves the state as it was: at Begin (ρ_inc·α
// overflows) no step is open; in Trial (γ = 1, ρ_dec·η underflows to 0) the
// trial stays outstanding and Abort restores the snapshot. With m = 0 every
// step takes ρ_inc·α untested, and the run stops with the error instead of
// handing out +Inf.
func TestSSLSRateOutOfRange(t *testing.T) {
	snap := func(s *schedule.SSLS) string {
		t.Helper()
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	big, err := schedule.NewSSLS(schedule.SSLSConfig{LR0: math.MaxFloat64 / 1.5, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: 0.1, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	before := snap(big)
	if _, err := big.Begin(1, 1); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Fatalf("Begin with ρ_inc·α = +Inf: err = %v, want an overflow error", err)
	}
	if after := snap(big); after != before {
		t.Fatalf("the failed Begin changed the state:\n%s\n%s", before, after)
	}

	tiny, err := schedule.NewSSLS(schedule.SSLSConfig{LR0: math.SmallestNonzeroFloat64, C: 0.05, RhoInc: 1, RhoDec: 0.5, Gamma: 1, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	before = snap(tiny)
	req, err := tiny.Begin(1, 1)
	if err != nil || !req.Eval {
		t.Fatalf("Begin: %+v, %v", req, err)
	}
	if _, err := tiny.Trial(2); err == nil || !strings.Contains(err.Error(), "underflows to 0") {
		t.Fatalf("Trial that halves η = %v: err = %v, want an underflow error", req.Eta, err)
	}
	if req, err := tiny.Trial(0); err != nil || req.Eval || req.LR != math.SmallestNonzeroFloat64 {
		t.Fatalf("the trial after the error: %+v, %v; want it still outstanding and accepted", req, err)
	}
	tiny.Abort()
	if after := snap(tiny); after != before {
		t.Fatalf("Abort after the failed Trial: state\n%s\nwant\n%s", after, before)
	}

	untested, err := schedule.NewSSLS(schedule.SSLSConfig{LR0: 0.1, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: 0.5, M: 0})
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; ; k++ {
		req, err := untested.Begin(1, 1)
		if err != nil {
			if !strings.Contains(err.Error(), "overflows") {
				t.Fatalf("step %d: %v, want an overflow error", k, err)
			}
			t.Logf("step %d: %v", k, err)
			break
		}
		if math.IsInf(req.LR, 0) || k > 10000 {
			t.Fatalf("step %d: rate %v handed out", k, req.LR)
		}
		if _, err := untested.End(schedule.Observation{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := untested.MarshalBinary(); err != nil {
		t.Fatalf("MarshalBinary after the error: %v", err)
	}
}
