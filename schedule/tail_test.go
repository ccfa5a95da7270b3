package schedule_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// TestTailTrace: a Tail of T = 10 steps around a constant 0.5, written out
// by hand from the definition. With a 20% decay (D = 2) and the inner cut
// to 0.05 after step 3: the inner's rates until step 8, then α_s·(1 − 0/2)
// and α_s·(1 − 1/2) with α_s = 0.05, and α_T past the budget. With Cuts and
// a 60% decay (D = 6, the inner not cut within the budget): α_s = 0.5 for
// steps 5–6, 0.05 for 7–8 and 0.005 for 9–10 and past the budget.
func TestTailTrace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drop   int
		cfg    schedule.TailConfig
		want   []float64
		decay  int     // the step of the decay event
		decayα float64 // α_s
	}{
		{"linear", 3, schedule.TailConfig{Steps: 10, Fraction: 0.2},
			[]float64{0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025}, 8, 0.05},
		{"cuts", 20, schedule.TailConfig{Steps: 10, Fraction: 0.6, Cuts: true},
			[]float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.05, 0.05, 0.005, 0.005, 0.005, 0.005}, 4, 0.5},
	} {
		in, err := schedule.NewCut(schedule.CutConfig{LR0: 0.5, Tau: 0.1, DropSteps: []int{tc.drop}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := schedule.NewTail(tc.cfg, in)
		if err != nil {
			t.Fatal(err)
		}
		got, decay := rates(t, s, 12)
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Fatalf("%s: α = %v, want %v", tc.name, got, tc.want)
			}
		}
		if len(decay) != 1 || decay[0].Step != tc.decay || math.Abs(decay[0].NewLR-tc.decayα) > 1e-15 || decay[0].Reason != "budget" {
			t.Errorf("%s: decay events %+v, want one at step %d from %v", tc.name, decay, tc.decay, tc.decayα)
		}
		if s.Name() != "cut-budget" || s.Searching() {
			t.Errorf("%s: name %q, searching %v", tc.name, s.Name(), s.Searching())
		}
	}
}

// rates steps s n times on schedtest's problem and returns each step's
// rate and the decay events.
func rates(t *testing.T, s schedule.Scheduler, n int) (lrs []float64, decay []schedule.Event) {
	t.Helper()
	p := schedtest.NewProblem(1, n)
	for k := 1; k <= n; k++ {
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatal(err)
		}
		lrs = append(lrs, res.LR)
		for _, e := range res.Events {
			if e.Kind == schedule.KindDecay {
				decay = append(decay, e)
			}
		}
	}
	return lrs, decay
}

// TestTailIsSALSAUntilTheDecay: salsa-budget takes SALSA's decisions, line
// searches included, step for step until T − D, and then no more tests.
func TestTailIsSALSAUntilTheDecay(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(500, 0) // D = 100: the tail starts after step 400
	c.Tail.FromSwitch = false
	plain, _ := schedule.New("salsa", c)
	budget, err := schedule.New("salsa-budget", c)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := schedtest.NewProblem(3, 500), schedtest.NewProblem(3, 500)
	drops, salsaAt400 := 0, 0.0
	for k := 1; k <= 500; k++ {
		r1, err1 := p1.Step(plain, k)
		r2, err2 := p2.Step(budget, k)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if k <= 400 {
			if r1.LR != r2.LR || r1.Searched != r2.Searched || len(r2.Events) != len(r1.Events)+b2i(k == 400) {
				t.Fatalf("step %d: salsa α %v searched %v, %d events; salsa-budget α %v searched %v, %d events",
					k, r1.LR, r1.Searched, len(r1.Events), r2.LR, r2.Searched, len(r2.Events))
			}
			for _, e := range r1.Events {
				drops += b2i(e.Kind == schedule.KindDrop)
			}
			salsaAt400 = r1.NextLR
			continue
		}
		_, a := budget.(*schedule.Tail).Decaying()
		if want := a * (1 - float64(k-401)/100); math.Abs(r2.LR-want) > 1e-12*a || len(r2.Events) != 0 || r2.Searched {
			t.Fatalf("step %d in the tail: α %v (want %v), events %+v, searched %v", k, r2.LR, want, r2.Events, r2.Searched)
		}
	}
	if drops == 0 {
		t.Errorf("SALSA made no drop before the tail: the test compares constant rates only")
	}
	if ok, a := budget.(*schedule.Tail).Decaying(); !ok || a != salsaAt400 {
		t.Errorf("decaying %v from %v, want from SALSA's rate after step 400, %v", ok, a, salsaAt400)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTailErrors: the budget is required, the fraction in (0, 1].
func TestTailErrors(t *testing.T) {
	c := small(schedule.PresetPaper)
	for _, tc := range []struct {
		mod  func(*schedule.Config)
		want string
	}{
		{func(c *schedule.Config) { c.Tail.Steps = 0 }, "TailConfig.Steps = 0: must be ≥ 1"},
		{func(c *schedule.Config) { c.Tail.Fraction = 1.5 }, "TailConfig.Fraction = 1.5"},
	} {
		cc := c
		tc.mod(&cc)
		if _, err := schedule.New("salsa-budget", cc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
	if !slices.Contains(schedule.MethodsOf("total_steps"), "salsa-budget") || !slices.Contains(schedule.MethodsOf("decay_fraction"), "salsa-budget") ||
		!schedule.KeyApplies("nmin", "salsa-budget") || schedule.KeyApplies("zeta", "salsa-budget") {
		t.Errorf("keys: total_steps → %v, decay_fraction → %v", schedule.MethodsOf("total_steps"), schedule.MethodsOf("decay_fraction"))
	}
}

// TestTailFromSwitch: with FromSwitch the decay begins at SALSA's switch and
// runs linearly to 0 over the rest of the budget; the variant passes the
// shared suite too.
func TestTailFromSwitch(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(500, 0)
	if !c.Tail.FromSwitch {
		t.Fatal("salsa-budget's default is not FromSwitch")
	}
	s := mustNewTail(t, c)
	p := schedtest.NewProblem(3, 500)
	sw, start := 0, 0.0
	for k := 1; k <= 500; k++ {
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Events {
			if e.Kind == schedule.KindDecay {
				sw, start = e.Step, e.NewLR
			}
		}
		if sw > 0 && k > sw {
			if want := start * (1 - float64(k-sw-1)/float64(500-sw)); math.Abs(res.LR-want) > 1e-12*start {
				t.Fatalf("step %d: α %v, want %v (decay from %v after step %d)", k, res.LR, want, start, sw)
			}
		}
	}
	_, _, at := s.Inner().(*schedule.SALSA).Switched()
	if sw == 0 || sw != at || sw >= 400 {
		t.Errorf("decay began after step %d, SALSA switched at %d: want the same step, before T − D = 400", sw, at)
	}
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	if _, err := schedule.NewTail(c.Tail, mustCut(t)); err == nil || !strings.Contains(err.Error(), "FromSwitch: cut never switches") {
		t.Errorf("FromSwitch around cut: err = %v", err)
	}
}

func mustNewTail(t *testing.T, c schedule.Config) *schedule.Tail {
	t.Helper()
	s, err := schedule.New("salsa-budget", c)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*schedule.Tail)
}

func mustCut(t *testing.T) schedule.Scheduler {
	t.Helper()
	s, err := schedule.NewCut(schedule.CutConfig{LR0: 0.5, Tau: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
