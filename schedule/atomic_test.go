package schedule_test

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// badEnd is a scheduler whose End first tries the overflowing observation
// bad (recording its error), then closes the step with the real one: the
// failed End must have left the open step exactly as it was.
type badEnd struct {
	schedule.Scheduler
	bad    func(lr float64) schedule.Observation
	lr     float64 // the LR of the last request
	badErr error
}

func (b *badEnd) Begin(loss, gd float64) (schedule.Request, error) {
	req, err := b.Scheduler.Begin(loss, gd)
	b.lr = req.LR
	return req, err
}

func (b *badEnd) Trial(f float64) (schedule.Request, error) {
	req, err := b.Scheduler.Trial(f)
	b.lr = req.LR
	return req, err
}

func (b *badEnd) End(obs schedule.Observation) (schedule.Result, error) {
	_, b.badErr = b.Scheduler.End(b.bad(b.lr))
	return b.Scheduler.End(obs)
}

func hasKind(res schedule.Result, k schedule.Kind) bool {
	return slices.ContainsFunc(res.Events, func(e schedule.Event) bool { return e.Kind == k })
}

func marshal(t *testing.T, s schedule.Scheduler) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	return b
}

// deltaOverflow is Δ = 1e308: finite, but its square overflows the window's
// variance, so the test of a step that pushes it fails.
func deltaOverflow(float64) schedule.Observation { return schedule.Observation{X1D: 1e308} }

// TestEndOverflowIsAtomic drives each scheduler to a step where a test runs
// (found by a scout run on the same inputs), makes that step's test overflow
// and requires an error, the snapshot unchanged, and then the step and the
// next 150 exactly as an unaffected twin takes them. The overflow is either
// Δ = 1e308 (SASA+'s and SASA's interval), a loss of 1e308 (the SLOPE test's
// covariance), ν = (α/2)·D2 of order 1e306 with Δ = 0 (SASA's margin ζ·ν̄),
// or Δ = X1D + (α/2)·D2 itself (checked before anything, as for every method).
func TestEndOverflowIsAtomic(t *testing.T) {
	const seed, steps = 11, 600
	type tcase struct {
		name   string
		method string
		mod    func(*schedule.Config)
		at     func(schedule.Result) bool // the step to fail: the first whose result satisfies it
		loss   bool                       // overflow through the loss of Begin, not the observation
		bad    func(lr float64) schedule.Observation
	}
	test := func(k schedule.Kind) func(schedule.Result) bool {
		return func(r schedule.Result) bool { return hasKind(r, k) }
	}
	var cases []tcase
	for _, val := range []string{"", "-val"} {
		cases = append(cases,
			tcase{name: "sasa+" + val, method: "sasa+" + val, at: test(schedule.KindTest), bad: deltaOverflow},
			tcase{name: "sasa" + val, method: "sasa" + val, at: test(schedule.KindEquivalenceTest), bad: deltaOverflow},
			tcase{name: "sasa" + val + "/margin", method: "sasa" + val, mod: func(c *schedule.Config) { c.SASA.Zeta = 1e10 },
				at: test(schedule.KindEquivalenceTest), bad: func(lr float64) schedule.Observation {
					const d2 = math.MaxFloat64
					return schedule.Observation{X1D: -(d2 * (0.5 * lr)), D2: d2} // Δ = 0, ν ≈ 4e306
				}},
			tcase{name: "slope" + val, method: "slope" + val, at: test(schedule.KindSlopeTest), loss: true},
			// SALSA before the switch: SASA+'s test fails (no SLOPE test yet) ...
			tcase{name: "salsa" + val + "/ssls-phase/sasa+-test", method: "salsa" + val,
				mod: func(c *schedule.Config) { c.Slope.NMin = 10 * steps },
				at:  func(r schedule.Result) bool { return r.Searched && hasKind(r, schedule.KindTest) }, bad: deltaOverflow},
			// ... the SLOPE test fails after SASA+ pushed Δ ...
			tcase{name: "salsa" + val + "/ssls-phase/slope-test", method: "salsa" + val,
				at: func(r schedule.Result) bool { return r.Searched && hasKind(r, schedule.KindSlopeTest) }, loss: true},
			// ... and after the switch, SASA+'s test fails.
			tcase{name: "salsa" + val + "/sasa+-phase", method: "salsa" + val,
				at: func(r schedule.Result) bool { return !r.Searched && hasKind(r, schedule.KindTest) }, bad: deltaOverflow},
		)
	}
	// No statistics: only Δ = X1D + (α/2)·D2 itself can overflow.
	for _, m := range []string{"ssls", "constant", "constant-val"} {
		cases = append(cases, tcase{name: m, method: m, at: func(r schedule.Result) bool { return r.Step == 50 },
			bad: func(float64) schedule.Observation {
				return schedule.Observation{X1D: math.MaxFloat64, D2: math.MaxFloat64}
			}})
	}
	for _, pr := range []schedule.Preset{schedule.PresetPaper, schedule.PresetStatopt} {
		for _, tc := range cases {
			t.Run(string(pr)+"/"+tc.name, func(t *testing.T) {
				mk := func() schedule.Scheduler {
					c := small(pr)
					if tc.mod != nil {
						tc.mod(&c)
					}
					s, err := schedule.New(tc.method, c)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				// Scout: the first step at which the wanted test runs.
				at := 0
				scout, ps := mk(), schedtest.NewProblem(seed, steps)
				for k := 1; k <= steps && at == 0; k++ {
					res, err := ps.Step(scout, k)
					if err != nil {
						t.Fatalf("scout: step %d: %v", k, err)
					}
					if tc.at(res) {
						at = k
					}
				}
				if at == 0 {
					t.Fatalf("no step of %d runs the wanted test", steps)
				}

				s, twin := mk(), mk()
				p, q := schedtest.NewProblem(seed, steps), schedtest.NewProblem(seed, steps)
				for k := 1; k < at; k++ {
					if _, err := p.Step(s, k); err != nil {
						t.Fatal(err)
					}
					if _, err := q.Step(twin, k); err != nil {
						t.Fatal(err)
					}
				}
				before := marshal(t, s)

				// The failed step, then Abort: the state is the one before Begin.
				loss := 1.0
				if tc.loss {
					loss = 1e308
				}
				req, err := s.Begin(loss, 1)
				for err == nil && req.Eval {
					req, err = s.Trial(1)
				}
				if err != nil {
					t.Fatal(err)
				}
				obs := schedule.Observation{X1D: 0.01, D2: 1e-4}
				if !tc.loss {
					obs = tc.bad(req.LR)
				}
				if _, err := s.End(obs); err == nil {
					t.Fatalf("step %d: End accepted an overflowing input (loss %v, %+v)", at, loss, obs)
				} else {
					t.Logf("step %d: %v", at, err)
				}
				if _, err := s.MarshalBinary(); !errors.Is(err, schedule.ErrPhase) {
					t.Fatalf("step %d: the failed End closed the step (MarshalBinary err = %v)", at, err)
				}
				s.Abort()
				if after := marshal(t, s); !bytes.Equal(before, after) {
					t.Fatalf("step %d: the failed End changed the state:\nbefore %s\nafter  %s", at, before, after)
				}

				// The same step with the real inputs, after a failed End of the
				// open step when the overflow is in the observation.
				var sched schedule.Scheduler = s
				var be *badEnd
				if !tc.loss {
					be = &badEnd{Scheduler: s, bad: tc.bad}
					sched = be
				}
				for k := at; k <= min(at+150, steps); k++ {
					got, err := p.Step(sched, k)
					if err != nil {
						t.Fatalf("step %d: %v", k, err)
					}
					if be != nil {
						if k == at && be.badErr == nil {
							t.Fatalf("step %d: End accepted %+v with the step open", k, be.bad(be.lr))
						}
						sched = s
					}
					want, err := q.Step(twin, k)
					if err != nil {
						t.Fatalf("twin: step %d: %v", k, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d: after the failed step:\ngot  %+v\nwant %+v", k, got, want)
					}
					if k == at && !tc.at(got) {
						t.Fatalf("step %d: the wanted test did not run: %+v", k, got)
					}
					if a, b := marshal(t, s), marshal(t, twin); !bytes.Equal(a, b) {
						t.Fatalf("step %d: the state differs from the twin's:\n%s\n%s", k, a, b)
					}
				}
			})
		}
	}
}

// TestSALSASetStateIsAtomic: a SALSA state whose SASA+ part is invalid is
// rejected without replacing the SSLS part.
func TestSALSASetStateIsAtomic(t *testing.T) {
	s, err := schedule.NewSALSA(small(schedule.PresetPaper).SALSA())
	if err != nil {
		t.Fatal(err)
	}
	p := schedtest.NewProblem(3, 50)
	for k := 1; k <= 50; k++ {
		if _, err := p.Step(s, k); err != nil {
			t.Fatal(err)
		}
	}
	before := marshal(t, s)
	st := s.State()
	st.SSLS.Step, st.SSLS.LR = 7, 0.123
	st.SASAPlus.Step, st.SASAPlus.LR = 7, -1
	if err := s.SetState(st); err == nil {
		t.Fatal("SetState accepted SASAPlus.LR = -1")
	}
	if after := marshal(t, s); !bytes.Equal(before, after) {
		t.Fatalf("a rejected SetState changed the state:\nbefore %s\nafter  %s", before, after)
	}
}

// TestDropUnderflowIsAtomic: a drop that would take α below float64's
// smallest normal number (here τ is the smallest positive float64, so the
// first drop does) is an error, from End at the step a scout run drops at,
// from Drop between steps and from a -val wrapper's Validate, and it leaves
// the state as it was.
func TestDropUnderflowIsAtomic(t *testing.T) {
	const seed, steps = 5, 600
	tiny := func(c *schedule.Config) {
		const tau = math.SmallestNonzeroFloat64
		c.SASAPlus.Tau, c.SASA.Tau, c.Slope.Tau, c.Constant.Tau, c.Cut.Tau, c.Warmup.Tau = tau, tau, tau, tau, tau, tau
	}
	// The methods whose own End drops within the steps (salsa-budget's
	// SALSA drops before its decay under the paper preset).
	wantEnd := []string{"cut", "warmup", "sasa+", "sasa", "slope", "salsa", "salsa-budget", "sasa+-val", "sasa-val", "slope-val", "salsa-val"}
	// The methods whose Drop is by τ: not SSLS's, the budgets' or plateau's.
	dropsByTau := []string{"constant", "cut", "warmup", "sasa+", "sasa", "slope", "salsa",
		"constant-val", "sasa+-val", "sasa-val", "slope-val", "salsa-val"}
	underflow := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "below float64's smallest normal number")
	}
	for _, pr := range []schedule.Preset{schedule.PresetPaper, schedule.PresetStatopt} {
		for _, m := range schedule.Methods {
			t.Run(string(pr)+"/"+m, func(t *testing.T) {
				mk := func(mod func(*schedule.Config)) schedule.Scheduler {
					c := small(pr)
					if mod != nil {
						mod(&c)
					}
					s, err := schedule.New(m, c)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				// The first step whose End drops by τ, with τ as configured.
				at, scout, ps := 0, mk(nil), schedtest.NewProblem(seed, steps)
				for k := 1; k <= steps && at == 0; k++ {
					res, err := ps.Step(scout, k)
					if err != nil {
						t.Fatalf("scout: step %d: %v", k, err)
					}
					if slices.ContainsFunc(res.Events, func(e schedule.Event) bool {
						return e.Kind == schedule.KindDrop && e.Reason != "validation" && e.Reason != "decay"
					}) {
						at = k
					}
				}
				// statopt's salsa-budget decays from the switch (Tail.FromSwitch).
				want := slices.Contains(wantEnd, m) && (pr != schedule.PresetStatopt || m != "salsa-budget")
				if want != (at > 0) {
					t.Fatalf("the scout dropped at step %d in its End; want a drop: %v", at, want)
				}
				s, p := mk(tiny), schedtest.NewProblem(seed, steps)
				last := max(at, 2)
				for k := 1; k <= last; k++ {
					before := marshal(t, s)
					_, err := p.Step(s, k)
					if k < at || at == 0 {
						if err != nil {
							t.Fatalf("step %d: %v", k, err)
						}
						continue
					}
					if !underflow(err) {
						t.Fatalf("step %d: err = %v, want the drop's underflow", k, err)
					}
					t.Logf("step %d: %v", k, err)
					if _, err := s.MarshalBinary(); !errors.Is(err, schedule.ErrPhase) {
						t.Fatalf("step %d: the failed End closed the step (MarshalBinary err = %v)", k, err)
					}
					s.Abort()
					if after := marshal(t, s); !bytes.Equal(before, after) {
						t.Fatalf("step %d: the failed End changed the state:\nbefore %s\nafter  %s", k, before, after)
					}
				}
				if !slices.Contains(dropsByTau, m) {
					return
				}

				// Between steps: Drop, and a -val wrapper's third Validate
				// without improvement (patience 1).
				before := marshal(t, s)
				if _, err := s.(schedule.Dropper).Drop("test"); !underflow(err) {
					t.Fatalf("Drop: err = %v, want the drop's underflow", err)
				}
				if after := marshal(t, s); !bytes.Equal(before, after) {
					t.Fatalf("the failed Drop changed the state:\nbefore %s\nafter  %s", before, after)
				}
				if v, ok := s.(schedule.Validator); ok {
					var err error
					for i := 0; i < 3 && err == nil; i++ {
						before = marshal(t, s)
						_, err = v.Validate(1)
					}
					if !underflow(err) {
						t.Fatalf("Validate: err = %v, want the drop's underflow", err)
					}
					if after := marshal(t, s); !bytes.Equal(before, after) {
						t.Fatalf("the failed Validate changed the state:\nbefore %s\nafter  %s", before, after)
					}
				}
			})
		}
	}
}
