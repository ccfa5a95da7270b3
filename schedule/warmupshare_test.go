package schedule_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// TestWarmupGamma: with WarmupShare s, γ is raised to γ_T = min(1,
// 10⁴^(1/(s·T)) − 1) where it is smaller, and left where it is not or
// where s is 0. The reference values are the γ_T that docs/parity's
// budget-warmup.md lists for H70 (T = 72: 0.8957) and H65 (T = 91:
// 0.6587), computed there with Python's math.exp.
func TestWarmupGamma(t *testing.T) {
	for _, tc := range []struct {
		share, gamma float64
		steps        int
		want         float64
	}{
		{0, 0.2887, 72, 0.2887},
		{0.2, 0.2887, 72, 0.8957},
		{0.2, 0.2774, 91, 0.6587},
		{0.2, 0.95, 72, 0.95},      // already faster
		{0.2, 0.378, 56, 1},        // γ_T = 1.28, capped at 1
		{0.2, 0.1857, 377, 0.1857}, // H46: γ_T = 0.130 < γ
	} {
		c := schedule.TailConfig{Steps: tc.steps, WarmupShare: tc.share}
		if got := c.WarmupGamma(tc.gamma); math.Abs(got-tc.want) > 5e-5 {
			t.Errorf("share %v, T %d, γ %v: WarmupGamma = %.5f, want %.4f", tc.share, tc.steps, tc.gamma, got, tc.want)
		}
	}
}

// TestWarmupShare: ForMethod applies WarmupGamma to salsa-budget's and
// salsa-probe's SSLS and to no other method's; SSLS's rate then climbs by
// 1 + γ' a step (small: n = 400, b = 4, γ = 0.1, T = 400, so γ' =
// 10⁴^(1/80) − 1 = 0.12202); the variant passes the shared suite; a share
// outside [0, 1) is refused; --set warmup_share sets it.
func TestWarmupShare(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.Tail.WarmupShare = 0.2
	want := math.Expm1(math.Log(1e4) / 80)
	for _, m := range []string{"salsa-budget", "salsa-probe"} {
		if g := c.ForMethod(m).SSLS.Gamma; math.Abs(g-want) > 1e-12 || math.Abs(g-0.12202) > 5e-6 {
			t.Errorf("%s: γ = %v, want %v", m, g, want)
		}
	}
	for _, m := range []string{"salsa", "ssls"} {
		if g := c.ForMethod(m).SSLS.Gamma; g != 0.1 {
			t.Errorf("%s: γ = %v, want the paper's 0.1", m, g)
		}
	}
	// ForMethod is idempotent: New applies it again to what a plan records
	if g := c.ForMethod("salsa-budget").ForMethod("salsa-budget").SSLS.Gamma; g != c.ForMethod("salsa-budget").SSLS.Gamma {
		t.Errorf("ForMethod twice: γ = %v", g)
	}
	for _, share := range []float64{0, 0.2} {
		c.Tail.WarmupShare = share
		s, err := schedule.New("salsa-budget", c)
		if err != nil {
			t.Fatal(err)
		}
		// Build, which runs a recorded configuration, works γ out too
		b, err := schedule.Build("salsa-budget", c)
		if err != nil {
			t.Fatal(err)
		}
		if g, h := s.(*schedule.Tail).Inner().(*schedule.SALSA).Config().SSLS.Gamma, b.(*schedule.Tail).Inner().(*schedule.SALSA).Config().SSLS.Gamma; g != h {
			t.Errorf("share %v: γ %v from New, %v from Build", share, g, h)
		}
		g := c.ForMethod("salsa-budget").SSLS.Gamma
		for k := 1; k <= 10; k++ {
			res := stepCap(t, s, 1, math.Inf(1))
			if r := 0.05 * math.Pow(1+g, float64(k)); math.Abs(res.NextLR-r) > 1e-12*r {
				t.Fatalf("share %v, step %d: rate %v, want 0.05·(1 + %v)^%d = %v", share, k, res.NextLR, g, k, r)
			}
		}
	}
	c.Tail.WarmupShare = 0.2
	schedtest.Run(t, func() schedule.Scheduler {
		s, err := schedule.New("salsa-probe", c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, 600)
	for _, v := range []float64{-0.1, 1, math.NaN(), math.Inf(1)} {
		c.Tail.WarmupShare = v
		wantRefused(t, c, fmt.Sprintf("TailConfig.WarmupShare = %v: must be in [0, 1)", v))
	}
	var typed schedule.Config
	if err := typed.Set("warmup_share", "0.2"); err != nil || typed.Tail.WarmupShare != 0.2 {
		t.Errorf("--set warmup_share=0.2: err = %v, WarmupShare = %v", err, typed.Tail.WarmupShare)
	}
	if got := schedule.MethodsOf("warmup_share"); strings.Join(got, ",") != "salsa-budget,salsa-probe" {
		t.Errorf("warmup_share applies to %v, want salsa-budget and salsa-probe", got)
	}
}
