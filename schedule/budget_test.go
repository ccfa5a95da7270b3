package schedule_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// lrs drives s for steps steps of the suite's problem and returns α_k.
func lrs(t *testing.T, s schedule.Scheduler, steps int) []float64 {
	t.Helper()
	p := schedtest.NewProblem(1, steps)
	var out []float64
	for k := 1; k <= steps; k++ {
		res, err := p.Step(s, k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.LR)
	}
	return out
}

// TestCosineTorch: without warmup the schedule is PyTorch's
// CosineAnnealingLR(T_max = 10, eta_min = 0.001) from lr 0.1 stepped once per
// batch. Source: torch 1.13 (/usr/bin/python3), the learning rate of each of
// 10 optimizer steps, run once; the closed form agrees to the last digit
// except at t = 7, where torch's recursive form gives 0.02140463001152259
// and the closed form 0.021404630011522586.
func TestCosineTorch(t *testing.T) {
	s, err := schedule.NewCosine(schedule.CosineConfig{LR: 0.1, Steps: 10, MinLR: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.1, 0.09757729755661011, 0.0905463412215599, 0.07959536998847742, 0.0657963412215599,
		0.0505, 0.03520365877844011, 0.021404630011522586, 0.010453658778440109, 0.0034227024433899004}
	got := lrs(t, s, 13)
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-15 {
			t.Errorf("step %d: α = %v, want %v", k+1, got[k], w)
		}
	}
	// Past the budget the last rate holds.
	if got[10] != got[9] || got[12] != got[9] {
		t.Errorf("past the budget α = %v, want %v", got[10:], got[9])
	}
}

// Warmup: α_k = LR·k/W for k ≤ W, then the cosine over T − W steps.
func TestCosineWarmup(t *testing.T) {
	s, _ := schedule.NewCosine(schedule.CosineConfig{LR: 1, Steps: 8, WarmupSteps: 4})
	got := lrs(t, s, 8)
	want := []float64{0.25, 0.5, 0.75, 1, 1, (1 + math.Cos(math.Pi/4)) / 2, 0.5, (1 + math.Cos(3*math.Pi/4)) / 2}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-15 {
			t.Fatalf("α = %v, want %v", got, want)
		}
	}
}

// WSD with T = 10, W = 2, decay over the last 2 steps (20%): the rates are
// written out by hand from the definition.
func TestWSD(t *testing.T) {
	s, err := schedule.NewWSD(schedule.WSDConfig{LR: 1, Steps: 10, WarmupSteps: 2, DecayFraction: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	got := lrs(t, s, 12)
	want := []float64{0.5, 1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5}
	if !slices.Equal(got, want) {
		t.Errorf("α = %v, want %v", got, want)
	}
	// T = 100: the decay covers steps 81..100, 1/20 less each step.
	s, _ = schedule.NewWSD(schedule.WSDConfig{LR: 2, Steps: 100, DecayFraction: 0.2})
	got = lrs(t, s, 100)
	if got[79] != 2 || got[80] != 2 || math.Abs(got[81]-1.9) > 1e-15 || math.Abs(got[99]-0.1) > 1e-15 {
		t.Errorf("α_80..82 = %v, α_100 = %v; want 2, 2, 1.9 and 0.1", got[79:82], got[99])
	}
}

// TestPlateauTorch: the reductions of PyTorch's ReduceLROnPlateau with its
// defaults (mode min, factor 0.1, patience 10, threshold 1e-4 rel, cooldown 0,
// min_lr 0, eps 1e-8) from lr 0.5, and with factor 0.5, patience 2,
// threshold 0.1 abs, cooldown 2, min_lr 0.2 from lr 1. Source: torch 1.13
// (/usr/bin/python3), scheduler.step(loss) for each loss below, the lr after
// each call, run once. The first sequence ends with the eps rule: after
// 5e-9 the next reduction (to 5e-10) is smaller than 1e-8 and skipped.
func TestPlateauTorch(t *testing.T) {
	var losses []float64
	add := func(v float64, n int) {
		for range n {
			losses = append(losses, v)
		}
	}
	add(1, 1)
	add(0.99995, 11) // not better than 1·(1 − 1e-4)
	add(0.5, 1)
	add(0.49996, 11)
	add(0.4999, 11)
	add(0.3, 101)
	changes := map[int]float64{12: 0.05, 24: 0.005000000000000001, 47: 0.0005000000000000001, 58: 5.0000000000000016e-05,
		69: 5.000000000000002e-06, 80: 5.000000000000002e-07, 91: 5.0000000000000024e-08, 102: 5.0000000000000026e-09}
	checkPlateau(t, schedule.DefaultPlateau(0.5), losses, func(i int, prev float64) float64 {
		if v, ok := changes[i]; ok {
			return v
		}
		return prev
	})

	cfg := schedule.PlateauConfig{LR: 1, Factor: 0.5, Patience: 2, Threshold: 0.1, ThresholdAbs: true, Cooldown: 2, MinLR: 0.2, Eps: 1e-8}
	want := []float64{1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25}
	checkPlateau(t, cfg, []float64{5, 4.95, 4.8, 4.85, 4.9, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
		func(i int, _ float64) float64 { return want[i-1] })
}

// checkPlateau runs one training step between checks and compares the rate
// after check i (1-based) with want(i, previous rate); it also resumes from
// a snapshot after every check and requires the same decisions.
func checkPlateau(t *testing.T, cfg schedule.PlateauConfig, losses []float64, want func(i int, prev float64) float64) {
	t.Helper()
	s, err := schedule.NewPlateau(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := schedtest.NewProblem(2, len(losses)+1)
	prev := cfg.LR
	for i, v := range losses {
		if _, err := p.Step(s, i+1); err != nil {
			t.Fatal(err)
		}
		r, err := schedule.Restore(marshal(t, s))
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Validate(v)
		if err != nil {
			t.Fatal(err)
		}
		res2, err := r.(*schedule.Plateau).Validate(v)
		if err != nil || !slices.EqualFunc(res.Events, res2.Events, func(a, b schedule.Event) bool { return a == b }) || res.NextLR != res2.NextLR {
			t.Fatalf("check %d: the restored scheduler decides %+v, want %+v", i+1, res2, res)
		}
		w := want(i+1, prev)
		if res.NextLR != w || s.LR() != w {
			t.Fatalf("check %d (loss %v): lr = %v, want %v", i+1, v, s.LR(), w)
		}
		dropped := len(res.Events) == 2 && res.Events[1].Kind == schedule.KindDrop && res.Events[1].NewLR == w
		if (w != prev) != dropped || res.Events[0].Kind != schedule.KindValidation {
			t.Fatalf("check %d: events %+v", i+1, res.Events)
		}
		prev = w
	}
}

func TestBudgetConfigErrors(t *testing.T) {
	c := small(schedule.PresetPaper)
	for _, tc := range []struct {
		name string
		mod  func(*schedule.Config)
		want string
	}{
		{"cosine", func(c *schedule.Config) { c.Cosine.Steps = 0 }, "CosineConfig.Steps = 0: must be ≥ 1"},
		{"cosine", func(c *schedule.Config) { c.Cosine.WarmupSteps = 400 }, "CosineConfig.WarmupSteps = 400: must be < the budget's 400 steps"},
		{"cosine", func(c *schedule.Config) { c.Cosine.MinLR = 1 }, "CosineConfig.MinLR = 1: must be ≥ 0 and < the peak rate, 0.05"},
		{"wsd", func(c *schedule.Config) { c.WSD.DecayFraction = 0 }, "WSDConfig.DecayFraction = 0: must be in (0, 1]"},
		{"wsd", func(c *schedule.Config) { c.WSD.WarmupSteps = 390 }, "WSDConfig.WarmupSteps = 390: must leave the decay its share of the budget: ≤ 320 steps (the budget's 400 − the decay's 80)"},
		{"plateau", func(c *schedule.Config) { c.Plateau.Factor = 1 }, "PlateauConfig.Factor = 1: must be in (0, 1)"},
		{"plateau", func(c *schedule.Config) { c.Plateau.Threshold = -1 }, "PlateauConfig.Threshold = -1"},
	} {
		cc := c
		tc.mod(&cc)
		if _, err := schedule.New(tc.name, cc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Defaults leave the budget unset; New says so.
	d, _ := schedule.Defaults(schedule.PresetPaper, 100, 10, 0.1)
	if _, err := schedule.New("cosine", d); err == nil || !strings.Contains(err.Error(), "CosineConfig.Steps = 0") {
		t.Errorf("cosine without a budget: err = %v", err)
	}
	if p := d.Plateau; p != schedule.DefaultPlateau(0.1) || p.Factor != 0.1 || p.Patience != 10 || p.Threshold != 1e-4 ||
		p.Cooldown != 0 || p.MinLR != 0 || p.Eps != 1e-8 || p.ThresholdAbs {
		t.Errorf("plateau defaults = %+v", p)
	}
	if d.WSD.DecayFraction != 0.2 {
		t.Errorf("wsd decay fraction = %v, want 0.2", d.WSD.DecayFraction)
	}
}

func TestBudgetKeys(t *testing.T) {
	for _, tc := range []struct {
		key, method string
		want        bool
	}{
		{"total_steps", "cosine", true}, {"total_steps", "wsd", true}, {"total_steps", "plateau", false},
		{"warmup_steps", "cosine", true}, {"warmup_steps", "wsd", true}, {"warmup_steps", "warmup", true},
		{"min_lr", "plateau", true}, {"min_lr", "cosine", true}, {"decay_fraction", "wsd", true},
		{"decay_fraction", "cosine", false}, {"patience", "plateau", true}, {"patience", "salsa-val", true},
		{"tau", "plateau", true}, {"threshold", "plateau", true}, {"cooldown", "plateau", true},
		{"lr0", "cosine", true}, {"lr0", "plateau", true}, {"theta", "cosine", false},
	} {
		if got := schedule.KeyApplies(tc.key, tc.method); got != tc.want {
			t.Errorf("KeyApplies(%q, %q) = %v, want %v", tc.key, tc.method, got, tc.want)
		}
	}
	c, _ := schedule.Defaults(schedule.PresetPaper, 100, 10, 0.1)
	for _, kv := range [][2]string{{"total_steps", "50"}, {"warmup_steps", "5"}, {"min_lr", "0.001"}, {"patience", "3"}, {"tau", "0.5"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if c.Cosine.Steps != 50 || c.WSD.Steps != 50 || c.Cosine.WarmupSteps != 5 || c.WSD.MinLR != 0.001 ||
		c.Plateau.Patience != 3 || c.Plateau.Factor != 0.5 || c.Plateau.MinLR != 0.001 {
		t.Errorf("after --set: %+v %+v %+v", c.Cosine, c.WSD, c.Plateau)
	}
	if got := schedule.KeysFor("wsd", "WSDConfig.Steps"); !slices.Equal(got, []string{"total_steps"}) {
		t.Errorf("KeysFor(WSDConfig.Steps) = %v", got)
	}
}

// Validate is refused while a step is open, and a non-finite loss leaves the
// state as it was.
func TestPlateauValidateErrors(t *testing.T) {
	s, _ := schedule.NewPlateau(schedule.DefaultPlateau(0.1))
	if _, err := s.Begin(1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Validate(1); err == nil {
		t.Error("Validate during a step accepted")
	}
	s.Abort()
	before, _ := s.MarshalBinary()
	if _, err := s.Validate(math.NaN()); err == nil {
		t.Error("Validate(NaN) accepted")
	}
	if after, _ := s.MarshalBinary(); string(after) != string(before) {
		t.Error("a rejected validation changed the state")
	}
}
