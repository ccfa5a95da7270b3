package stats

import (
	"math"
	"strings"
	"testing"
)

// Student-t quantiles: scipy = scipy 1.10.1 stats.t.ppf(p, dof); exact =
// mpmath 1.2.1 (40 digits) root of 1 − betainc(dof/2, 1/2, 0, dof/(dof+t²),
// regularized)/2 = p, rounded to float64. scipy 1.10's ppf is itself off by
// up to ~5e-9 relative (e.g. dof 9, p 0.995), so TQuantile is held to the
// exact value and to scipy only within scipy's error.
var tPPFRef = []struct {
	p          float64
	dof        int
	scipy, exa float64
}{
	{0.975, 1, 12.706204736432095, 12.706204736174694},
	{0.975, 2, 4.302652729911275, 4.302652729749462},
	{0.975, 9, 2.2621571627409915, 2.262157162798205},
	{0.975, 112, 1.9813718148344004, 1.9813718148763055},
	{0.975, 1000, 1.9623390808264074, 1.962339080826408},
	{0.995, 1, 63.65674116287399, 63.656741162871526},
	{0.995, 2, 9.92484320091807, 9.92484320091829},
	{0.995, 9, 3.2498355440153697, 3.249835541592126},
	{0.995, 112, 2.6204400724689467, 2.6204400729518422},
	{0.995, 1000, 2.580754698065942, 2.5807546980659506},
	{0.6, 1, 0.32491969623407446, 0.32491969623290623},
	{0.6, 2, 0.2886751346880066, 0.2886751345948128},
	{0.6, 9, 0.26095533647391045, 0.26095533647391095},
	{0.6, 112, 0.2539497520055055, 0.2539497520062054},
	{0.6, 1000, 0.25341451583949864, 0.2534145158394987},
	{0.025, 1, -12.706204736432102, -12.706204736174705},
	{0.025, 2, -4.3026527299112765, -4.302652729749464},
	{0.025, 9, -2.262157162740992, -2.2621571627982053},
	{0.025, 112, -1.9813718148344008, -1.981371814876306},
	{0.025, 1000, -1.9623390808264078, -1.9623390808264085},
	{1e-06, 1, -318309.88618278794, -318309.8861827435},
	{1e-06, 2, -707.1057205259351, -707.1057205259339},
	{1e-06, 9, -10.720160409937254, -10.7201604099095},
	{1e-06, 112, -5.015694100838426, -5.015694100839056},
	{1e-06, 1000, -4.781608620455028, -4.781608620458351},
	// gonum's Quantile alone returns -81.65 here; TQuantile bisects.
	{1e-10, 100000, -6.3620004198436915, -6.3620004198436915},
}

// Student-t CDF: scipy 1.10.1 stats.t.cdf(t, dof) and the mpmath value as above.
var tCDFRef = []struct {
	t          float64
	dof        int
	scipy, exa float64
}{
	{-40.0, 1, 0.007956089912025812, 0.007956089912025814},
	{-40.0, 2, 0.0003122073360923703, 0.0003122073360923703},
	{-40.0, 9, 9.491499224669917e-12, 9.491499224669913e-12},
	{-40.0, 112, 1.8610411112009246e-68, 1.861041111200954e-68},
	{-40.0, 1000, 5.239426077586736e-210, 5.2394260775866807e-210},
	{-3.0, 1, 0.10241638234956672, 0.10241638234956672},
	{-3.0, 2, 0.047732983133354556, 0.04773298313335456},
	{-3.0, 9, 0.007478181955207101, 0.007478181955207107},
	{-3.0, 112, 0.0016639592458985233, 0.0016639592458985255},
	{-3.0, 1000, 0.0013833545221190939, 0.0013833545221190963},
	{-1.5, 1, 0.1871670418109988, 0.18716704181099883},
	{-1.5, 2, 0.13619656244550044, 0.13619656244550055},
	{-1.5, 9, 0.08392532802853743, 0.08392532802853742},
	{-1.5, 112, 0.06821404935201503, 0.068214049352015},
	{-1.5, 1000, 0.06696501941104312, 0.06696501941104309},
	{0.3, 1, 0.5927735790777423, 0.5927735790777423},
	{0.3, 9, 0.6145046481292376, 0.6145046481292376},
	{0.3, 1000, 0.6178802479163779, 0.617880247916378},
	{2.0, 2, 0.908248290463863, 0.908248290463863},
	{2.0, 112, 0.9760397641361379, 0.9760397641361378},
	{10.0, 9, 0.999998210881284, 0.999998210881284},
}

func TestTQuantileReference(t *testing.T) {
	for _, c := range tPPFRef {
		got := TQuantile(c.p, c.dof)
		tol := 1e-12
		if c.dof > 1000 {
			tol = 1e-10 // gonum's CDF is good to ~1.6e-10 at dof 1e5
		}
		if e := relErr(got, c.exa); e > tol {
			t.Errorf("TQuantile(%v, %d) = %v, exact %v (rel %.2g)", c.p, c.dof, got, c.exa, e)
		}
		if e := relErr(got, c.scipy); e > 5e-9 {
			t.Errorf("TQuantile(%v, %d) = %v, scipy %v (rel %.2g)", c.p, c.dof, got, c.scipy, e)
		}
	}
	for _, c := range []struct {
		p   float64
		dof int
	}{{-0.1, 3}, {1.1, 3}, {math.NaN(), 3}, {0.5, 0}} {
		if !math.IsNaN(TQuantile(c.p, c.dof)) {
			t.Errorf("TQuantile(%v, %d) is not NaN", c.p, c.dof)
		}
	}
	// Far tails: mpmath 1.2.1 gives CDF(-5.017857536050508e10; 30) = 1.0e-300
	// (scipy 1.10.1 returns -2.1e11 there); dof 1 would need |t| = 3e299.
	if got := TQuantile(1e-300, 30); relErr(got, -5.017857536050508e10) > 1e-12 {
		t.Errorf("TQuantile(1e-300, 30) = %v", got)
	}
	if got := TQuantile(1e-300, 1); !math.IsInf(got, -1) {
		t.Errorf("TQuantile(1e-300, 1) = %v, want -Inf (beyond 1e150)", got)
	}
	if !math.IsInf(TQuantile(0, 5), -1) || !math.IsInf(TQuantile(1, 5), 1) || TQuantile(0.5, 5) != 0 {
		t.Error("TQuantile at p = 0, 1, 0.5")
	}
}

func TestTCDFReference(t *testing.T) {
	for _, c := range tCDFRef {
		got := TCDF(c.t, c.dof)
		if e := relErr(got, c.exa); e > 1e-12 {
			t.Errorf("TCDF(%v, %d) = %v, exact %v (rel %.2g)", c.t, c.dof, got, c.exa, e)
		}
		if e := relErr(got, c.scipy); e > 1e-12 {
			t.Errorf("TCDF(%v, %d) = %v, scipy %v (rel %.2g)", c.t, c.dof, got, c.scipy, e)
		}
	}
	if !math.IsNaN(TCDF(math.NaN(), 3)) || !math.IsNaN(TCDF(1, 0)) || TCDF(math.Inf(1), 3) != 1 || TCDF(math.Inf(-1), 3) != 0 {
		t.Error("TCDF edge cases")
	}
}

func TestMeanIntervalScipyReference(t *testing.T) {
	// numpy 1.24.2 / scipy 1.10.1 on refSeries, δ = 0.05:
	// hw = std*stats.t.ppf(0.975, dof)/sqrt(N); mean1 = w[:N//2].mean(), mean2 = w[N//2:].mean().
	// hw inherits scipy's ppf error (≤ 3e-11 relative at p = 0.975).
	for _, c := range []struct {
		m                   VarianceMethod
		hw, lower, upper    float64
		std                 float64
		dof                 int
		mean1, mean2, mean0 float64
	}{
		{IID, 0.43542907371690304, -0.27977689980385956, 0.5910812476299465, 1.0069297442629366, 22, 0.2127272727272728, 0.10333333333333333, 0.15565217391304348},
		{BM, 0.47979732896587496, -0.3241451550528315, 0.6354495028789184, 0.7230372280704523, 3, 0.2127272727272728, 0.10333333333333333, 0.15565217391304348},
		{OLBM, 0.31548281856564303, -0.15983064465259955, 0.4711349924786865, 0.72287867077018, 19, 0.2127272727272728, 0.10333333333333333, 0.15565217391304348},
	} {
		iv, err := MeanInterval(refSeries, c.m, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if iv.N != 23 || iv.Dof != c.dof || relErr(iv.Std, c.std) > 1e-14 || relErr(iv.Mean, c.mean0) > 1e-15 ||
			relErr(iv.Mean1, c.mean1) > 1e-15 || relErr(iv.Mean2, c.mean2) > 1e-15 {
			t.Errorf("%v: %+v", c.m, iv)
		}
		if relErr(iv.HalfWidth, c.hw) > 1e-10 || relErr(iv.Lower, c.lower) > 1e-10 || relErr(iv.Upper, c.upper) > 1e-10 {
			t.Errorf("%v: hw %v lower %v upper %v; scipy %v %v %v", c.m, iv.HalfWidth, iv.Lower, iv.Upper, c.hw, c.lower, c.upper)
		}
	}
}

func TestStationary(t *testing.T) {
	mk := func(mean, hw, m1, m2 float64) Interval {
		return Interval{Mean: mean, HalfWidth: hw, Lower: mean - hw, Upper: mean + hw, Mean1: m1, Mean2: m2}
	}
	for _, c := range []struct {
		iv                         Interval
		plain, sign, comp, compSig bool
	}{
		{mk(0.1, 1, 0.2, 0.05), true, true, true, true},        // everything agrees: stationary
		{mk(0.1, 1, 0.5, -0.3), true, false, true, false},      // halves of opposite sign
		{mk(2, 1, 2.5, 1.5), false, false, false, false},       // interval excludes 0
		{mk(0.5, 0.6, 1.0, 0.01), true, true, false, false},    // first half outside ±hw
		{mk(-0.5, 0.6, -0.01, -1.0), true, true, false, false}, // second half outside
		{mk(0, 0, 0, 0), false, false, false, false},           // open interval: 0 is not inside (0, 0)
		{mk(1, 1, 0.5, 1.5), false, false, false, false},       // Lower = 0 exactly: not < 0
	} {
		if got := c.iv.Stationary(false, false); got != c.plain {
			t.Errorf("%+v plain: %v", c.iv, got)
		}
		if got := c.iv.Stationary(true, false); got != c.sign {
			t.Errorf("%+v sign: %v", c.iv, got)
		}
		if got := c.iv.Stationary(false, true); got != c.comp {
			t.Errorf("%+v composite: %v", c.iv, got)
		}
		if got := c.iv.Stationary(true, true); got != c.compSig {
			t.Errorf("%+v composite+sign: %v", c.iv, got)
		}
	}
}

func TestEquivalent(t *testing.T) {
	iv := Interval{Lower: -0.2, Upper: 0.3}
	for _, c := range []struct {
		margin float64
		want   bool
	}{{0.3, true}, {1, true}, {0.29, false}, {0.2, false}, {-1, false}, {math.NaN(), false}} {
		if got := iv.Equivalent(c.margin); got != c.want {
			t.Errorf("Equivalent(%v) = %v", c.margin, got)
		}
	}
}

func TestMeanIntervalErrors(t *testing.T) {
	w := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct {
		w     []float64
		m     VarianceMethod
		delta float64
		want  string
	}{
		{w, BM, 0, "delta = 0: must be in (0, 1)"},
		{w, BM, 1, "delta = 1"},
		{w, BM, math.NaN(), "delta = NaN"},
		{w[:3], BM, 0.05, "N = 3: bm needs N >= 4"},
		{w[:1], IID, 0.05, "N = 1: iid needs N >= 2"},
		{w, 0, 0.05, "variance method = 0"},
		{nil, 0, 0.05, "variance method = 0"},
		{[]float64{1, 2, math.Inf(-1), 4}, OLBM, 0.05, "w[2] = -Inf"},
		{[]float64{1e308, 1e308, -1e308, -1e308}, IID, 0.05, "overflow"},
		{[]float64{1, 2}, IID, 1e-300, "delta = 1e-300: the t quantile with dof 1 overflows"},
	} {
		_, err := MeanInterval(c.w, c.m, c.delta)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MeanInterval(%v, %v, %v): err = %v, want %q", c.w, c.m, c.delta, err, c.want)
		}
	}
}
