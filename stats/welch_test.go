package stats

import (
	"math"
	"strings"
	"testing"
)

// TestWelchTest checks Welch's statistic, ν and critical value against
// SciPy 1.10.1 (Debian's python3-scipy): T from
// scipy.stats.ttest_ind(a, b, equal_var=False, alternative='greater'), ν
// from the Welch–Satterthwaite formula on numpy's ddof-1 deviations; the
// critical value t*_{0.95}(ν) from mpmath 1.3 at 40 digits (the root of
// 1 − I_{ν/(ν+t²)}(ν/2, 1/2)/2 = 0.95), since SciPy's t.ppf is off by up to
// 6e-10 relative at these ν (2.0470006553228566 at the first). The first pair is
// held-out H65's (runs/warmshare/h65, salsa-probe-lr0.01-s1, steps 22–26
// at rate 19.3 against steps 17–21 at 9.65): not larger at δ = 0.05,
// where the probe's test against the last window rejected it. The second
// is just past the critical value.
func TestWelchTest(t *testing.T) {
	for _, c := range []struct {
		m1, s1     float64
		n1         int
		m0, s0     float64
		n0         int
		tt, nu, cr float64
		larger     bool
	}{
		{3.788276195526123, 0.1419627826768817, 5, 3.687510347366333, 0.04120906754326836, 5, 1.5242512433991362, 4.669350905055867, 2.0470006565632789, false},
		{2, 1, 3, 0.25, 0.18708286933869706, 6, 3.0049099869187477, 2.070358881037073, 2.8534252487814856, true},
		{5.125, 0.8539125638299665, 4, 1.05, 0.07071067811865482, 2, 9.479521629646971, 3.0811114577635874, 2.3283200202307830, true},
	} {
		r, err := WelchTest(c.m1, c.s1, c.n1, c.m0, c.s0, c.n0, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(r.T, c.tt) > 1e-12 || relErr(r.Nu, c.nu) > 1e-12 || relErr(r.Crit, c.cr) > 1e-12 || r.Larger != c.larger {
			t.Errorf("WelchTest(%v, %v, %d, %v, %v, %d) = %+v, want T %v, ν %v, crit %v, larger %v", c.m1, c.s1, c.n1, c.m0, c.s0, c.n0, r, c.tt, c.nu, c.cr, c.larger)
		}
		if lo, hi := float64(min(c.n1, c.n0)-1), float64(c.n1+c.n0-2); r.Nu < lo || r.Nu > hi {
			t.Errorf("ν = %v outside [%v, %v]", r.Nu, lo, hi)
		}
	}
	// equal variances and sizes: ν = 2(n − 1), T is the pooled test's
	if r, _ := WelchTest(1, 2, 10, 0, 2, 10, 0.05); math.Abs(r.Nu-18) > 1e-12 || math.Abs(r.T-1/math.Sqrt(0.8)) > 1e-12 || math.Abs(r.Crit-TQuantile(0.95, 18)) > 1e-12 {
		t.Errorf("equal variances: %+v, want ν 18, T %v", r, 1/math.Sqrt(0.8))
	}
	// one sample without spread: ν is the other's n − 1
	if r, _ := WelchTest(1, 0, 4, 0, 1, 6, 0.05); math.Abs(r.Nu-5) > 1e-12 {
		t.Errorf("s1 = 0: ν = %v, want 5", r.Nu)
	}
	// no spread at all: the sign of the difference decides
	if r, _ := WelchTest(1, 0, 3, 0, 0, 3, 0.05); !r.Larger || !math.IsInf(r.T, 1) {
		t.Errorf("no spread, m1 > m0: %+v", r)
	}
	if r, _ := WelchTest(0, 0, 3, 0, 0, 3, 0.05); r.Larger || r.T != 0 {
		t.Errorf("no spread, m1 = m0: %+v", r)
	}
	if r, _ := WelchTest(-1, 0, 3, 0, 0, 3, 0.05); r.Larger || !math.IsInf(r.T, -1) {
		t.Errorf("no spread, m1 < m0: %+v", r)
	}
	for _, c := range []struct {
		m1, s1 float64
		n1     int
		delta  float64
		want   string
	}{
		{1, 1, 3, 0, "delta = 0"},
		{1, 1, 3, 1, "delta = 1"},
		{1, 1, 1, 0.05, "need ≥ 2"},
		{math.NaN(), 1, 3, 0.05, "NaN"},
		{1, math.Inf(1), 3, 0.05, "Inf"},
		{1, -1, 3, 0.05, "must be ≥ 0"},
		{1e300, 1e300, 3, 0.05, "m1, s1, m0, s0"},
	} {
		if _, err := WelchTest(c.m1, c.s1, c.n1, 0, 1, 3, c.delta); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WelchTest(%v, %v, %d, …, δ %v): error %v, want one with %q", c.m1, c.s1, c.n1, c.delta, err, c.want)
		}
	}
}

func TestTQuantileRealDof(t *testing.T) {
	// t*_{0.95}(4.669350905055867) = 2.0470006565632789 (mpmath, as in
	// TestWelchTest); at an integer ν it is TQuantile's
	if got := tQuantile(0.95, 4.669350905055867); relErr(got, 2.0470006565632789) > 1e-12 {
		t.Errorf("tQuantile(0.95, 4.669…) = %v", got)
	}
	if tQuantile(0.95, 7) != TQuantile(0.95, 7) {
		t.Error("tQuantile and TQuantile differ at an integer ν")
	}
	for _, nu := range []float64{0.5, math.NaN(), math.Inf(1)} {
		if !math.IsNaN(tQuantile(0.95, nu)) {
			t.Errorf("tQuantile(0.95, %v) is not NaN", nu)
		}
	}
}
