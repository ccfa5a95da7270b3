package schedule_test

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
	"github.com/salsaopt/salsa/stats"
)

// small returns a bundle whose tests fall due within the suite's 600 steps.
func small(p schedule.Preset) schedule.Config {
	c, err := schedule.Defaults(p, 400, 4, 0.05)
	if err != nil {
		panic(err)
	}
	c.SASAPlus.NMin, c.SASAPlus.KTest, c.SASAPlus.DropAfter = 10, 10, 0
	c.SASA.NMin, c.SASA.KTest, c.SASA.DropAfter, c.SASA.Zeta = 10, 10, 0, 10
	c.Slope.NMin, c.Slope.DropAfter = 10, 0
	if p == schedule.PresetPaper {
		c.Slope.KTest = 10
	}
	c.Cut.DropSteps = []int{100, 300}
	c.Warmup.Steps, c.Warmup.DropSteps = 50, []int{400}
	c.Validation.Patience = 1
	c.SetBudget(400, 50) // the suite's 600 steps run past it
	return c
}

// TestSuite runs the shared suite on every method under both presets.
func TestSuite(t *testing.T) {
	for _, p := range []schedule.Preset{schedule.PresetPaper, schedule.PresetStatopt} {
		for _, m := range schedule.Methods {
			t.Run(string(p)+"/"+m, func(t *testing.T) {
				mk := func() schedule.Scheduler {
					s, err := schedule.New(m, small(p))
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				schedtest.Run(t, mk, 600)
			})
		}
	}
}

// TestSuiteSeesDecisions guards the suite itself: with the small configuration
// the problem makes SASA+ drop and SALSA switch, so the resume checks cover
// decisions and not only constant rates.
func TestSuiteSeesDecisions(t *testing.T) {
	for _, m := range []string{"sasa+", "salsa", "slope", "sasa", "cut"} {
		s, err := schedule.New(m, small(schedule.PresetPaper))
		if err != nil {
			t.Fatal(err)
		}
		p := schedtest.NewProblem(4, 600)
		drops := 0
		for k := 1; k <= 600; k++ {
			res, err := p.Step(s, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Events {
				if e.Kind == schedule.KindDrop {
					drops++
				}
			}
		}
		if drops == 0 {
			t.Errorf("%s made no drop in 600 steps of the suite's problem", m)
		}
	}
}

func TestConfigErrorsNameFieldValueRange(t *testing.T) {
	c := small(schedule.PresetPaper)
	cases := []struct {
		name string
		mod  func(*schedule.Config)
		want string
	}{
		{"sasa+", func(c *schedule.Config) { c.SASAPlus.Theta = 1.5 }, "SASAPlusConfig.Theta = 1.5: must be in (0, 1]"},
		{"sasa+", func(c *schedule.Config) { c.SASAPlus.Delta = 0 }, "SASAPlusConfig.Delta = 0: must be in (0, 1)"},
		{"sasa+", func(c *schedule.Config) { c.SASAPlus.Tau = math.NaN() }, "SASAPlusConfig.Tau = NaN: must be in (0, 1)"},
		{"sasa+", func(c *schedule.Config) { c.SASAPlus.NMin = 2 }, "SASAPlusConfig.NMin = 2: must be ≥ 3"},
		{"sasa+", func(c *schedule.Config) { c.SASAPlus.Variance = 0 }, "SASAPlusConfig.Variance = 0"},
		{"ssls", func(c *schedule.Config) { c.SSLS.RhoInc = 0.5 }, "SSLSConfig.RhoInc = 0.5: must be finite and ≥ 1"},
		{"ssls", func(c *schedule.Config) { c.SSLS.Gamma = 2 }, "SSLSConfig.Gamma = 2: must be in [0, 1]"},
		{"ssls", func(c *schedule.Config) { c.SSLS.LR0 = -1 }, "SSLSConfig.LR0 = -1: must be finite and > 0"},
		{"salsa", func(c *schedule.Config) { c.Slope.KTest = 0 }, "SlopeConfig.KTest = 0: must be ≥ 1"},
		{"cut", func(c *schedule.Config) { c.Cut.DropSteps = []int{5, 5} }, "CutConfig.DropSteps[1] = 5: must be ≥ 1 and strictly increasing"},
		{"sasa", func(c *schedule.Config) { c.SASA.Zeta = 0 }, "SASAConfig.Zeta = 0: must be finite and > 0"},
		{"salsa-val", func(c *schedule.Config) { c.Validation.Patience = -1 }, "ValidationConfig.Patience = -1: must be ≥ 0"},
		{"nope", func(c *schedule.Config) {}, `method "nope": must be one of`},
		{"cut-val", func(c *schedule.Config) {}, "cut"}, // Cut drops: accepted
	}
	for _, tc := range cases {
		cc := c
		tc.mod(&cc)
		_, err := schedule.New(tc.name, cc)
		if tc.name == "cut-val" {
			if err != nil {
				t.Errorf("cut-val: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	if _, err := schedule.Defaults("nope", 10, 1, 0.1); err == nil {
		t.Error("Defaults accepted preset nope")
	}
	if _, err := schedule.Defaults(schedule.PresetPaper, 10, 11, 0.1); err == nil || !strings.Contains(err.Error(), "b = 11") {
		t.Errorf("Defaults b > n: err = %v", err)
	}
}

// TestDefaults checks the paper's Table 1 and §3 for MNIST (n = 60000,
// b = 128: ⌈n/b⌉ = 469).
func TestDefaults(t *testing.T) {
	c, err := schedule.Defaults(schedule.PresetPaper, 60000, 128, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	sp := c.SASAPlus
	if sp.NMin != 469 || sp.KTest != 100 || sp.Theta != 0.125 || sp.Delta != 0.05 || sp.Tau != 0.1 || sp.Variance != stats.BM ||
		sp.SignCheck || sp.Composite || sp.DivideLR || sp.DropAfter != 0 {
		t.Errorf("paper SASA+ defaults = %+v", sp)
	}
	ls := c.SSLS
	if ls.C != 0.05 || ls.RhoInc != 2 || ls.RhoDec != 0.5 || ls.M != 2 || ls.Gamma != math.Sqrt(128.0/60000) || ls.AcceptEqual {
		t.Errorf("paper SSLS defaults = %+v", ls)
	}
	if c.Slope.KTest != 100 || c.Slope.NMin != 469 {
		t.Errorf("paper SLOPE defaults = %+v", c.Slope)
	}
	s, err := schedule.Defaults(schedule.PresetStatopt, 60000, 128, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if s.SASAPlus.NMin != 1000 || s.SASAPlus.DropAfter != 1000 || s.SALSA().SASAPlus.DropAfter != 0 || s.SASAPlus.Variance != stats.IID ||
		!s.SASAPlus.SignCheck || !s.SASAPlus.Composite || !s.SASAPlus.DivideLR || s.Slope.KTest != 1 || !s.SSLS.AcceptEqual {
		t.Errorf("statopt defaults = %+v", s)
	}
	// Small data sets: N_min = K_test = ⌈n/b⌉.
	c, _ = schedule.Defaults(schedule.PresetPaper, 2000, 20, 0.1)
	if c.SASAPlus.NMin != 100 || c.SASAPlus.KTest != 100 {
		t.Errorf("n/b = 100: NMin %d KTest %d", c.SASAPlus.NMin, c.SASAPlus.KTest)
	}
}

// TestRestoreKeepsLogger checks that a scheduler restored with WithLogger
// logs, from the snapshot on, exactly what the original logs, wrappers
// included: every method under both presets, with a validation loss at
// every 50th step for the ones that take it.
func TestRestoreKeepsLogger(t *testing.T) {
	const at, steps = 300, 600
	for _, pr := range []schedule.Preset{schedule.PresetPaper, schedule.PresetStatopt} {
		for _, m := range schedule.Methods {
			t.Run(string(pr)+"/"+m, func(t *testing.T) {
				var orig, rest bytes.Buffer
				logger := func(w io.Writer) schedule.Option {
					return schedule.WithLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
						Level: slog.LevelDebug,
						ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
							if a.Key == slog.TimeKey {
								return slog.Attr{}
							}
							return a
						}})))
				}
				s, err := schedule.New(m, small(pr), logger(&orig))
				if err != nil {
					t.Fatal(err)
				}
				p := schedtest.NewProblem(3, steps)
				step := func(s schedule.Scheduler, p *schedtest.Problem, k int) {
					t.Helper()
					if _, err := p.Step(s, k); err != nil {
						t.Fatalf("step %d: %v", k, err)
					}
					if v, ok := s.(schedule.Validator); ok && k%50 == 0 {
						res, err := v.Validate(p.ValLoss())
						if err != nil {
							t.Fatalf("step %d: Validate: %v", k, err)
						}
						if res.ResetMomentum {
							clear(p.Mom)
						}
					}
				}
				for k := 1; k <= at; k++ {
					step(s, p, k)
				}
				data, err := s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				r, err := schedule.Restore(data, logger(&rest))
				if err != nil {
					t.Fatal(err)
				}
				before := orig.Len()
				q := p.Clone()
				for k := at + 1; k <= steps; k++ {
					step(s, p, k)
					step(r, q, k)
				}
				want := orig.String()[before:]
				if got := rest.String(); got != want {
					t.Fatalf("after Restore with WithLogger, steps %d–%d log\n%s\nwant the original's\n%s", at+1, steps, got, want)
				}
				if want == "" && m != "constant" && m != "ssls" && m != "cosine" {
					t.Logf("%s logs nothing after step %d", m, at)
				}
			})
		}
	}
}
