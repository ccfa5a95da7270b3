package stats

import (
	"fmt"
	"math"
)

// Welch is Welch's one-sided two-sample t-test (Welch 1947) that the mean
// of sample 1 exceeds that of sample 0, from each sample's mean m, sample
// standard deviation s (ddof 1) and size n:
//
//	t = (m₁ − m₀)/√v,  v = s₁²/n₁ + s₀²/n₀,
//	ν = v² / (s₁⁴/(n₁²(n₁−1)) + s₀⁴/(n₀²(n₀−1)))   (Welch–Satterthwaite),
//
// rejected in favour of m₁ > m₀ when t > t*_{1−δ}(ν), Student's quantile at
// the real ν, which lies in [min(n₀, n₁) − 1, n₀ + n₁ − 2]. Unlike the
// pooled test it does not assume the two variances are equal.
type Welch struct {
	Diff   float64 // m₁ − m₀
	SE     float64 // √v
	T      float64 // Diff/SE; 0 when both are 0, ±Inf when only SE is 0
	Nu     float64 // ν; n₀ + n₁ − 2 when SE is 0
	Crit   float64 // t*_{1−δ}(ν)
	Larger bool    // T > Crit: m₁ > m₀ at level δ
}

// WelchTest is [Welch] on two samples' summaries. It is an error if δ is
// not in (0, 1), a sample has fewer than 2 values, a standard deviation is
// negative, or any input is NaN or ±Inf.
func WelchTest(m1, s1 float64, n1 int, m0, s0 float64, n0 int, delta float64) (Welch, error) {
	if !(delta > 0 && delta < 1) {
		return Welch{}, fmt.Errorf("stats: delta = %v: must be in (0, 1)", delta)
	}
	if n1 < 2 || n0 < 2 {
		return Welch{}, fmt.Errorf("stats: samples of %d and %d values: need ≥ 2 each", n1, n0)
	}
	if !finite(m1, s1, m0, s0) {
		return Welch{}, nonFinite("m1, s1, m0, s0", []float64{m1, s1, m0, s0})
	}
	if s1 < 0 || s0 < 0 {
		return Welch{}, fmt.Errorf("stats: standard deviations %v and %v: must be ≥ 0", s1, s0)
	}
	a, b := s1*s1/float64(n1), s0*s0/float64(n0)
	v := a + b
	r := Welch{Diff: m1 - m0, SE: math.Sqrt(v), Nu: float64(n1 + n0 - 2)}
	if !finite(r.Diff, v) {
		return Welch{}, nonFinite("m1, s1, m0, s0", []float64{m1, s1, m0, s0})
	}
	switch {
	case v > 0:
		r.T = r.Diff / r.SE
		r.Nu = v * v / (a*a/float64(n1-1) + b*b/float64(n0-1))
		// rounding can take ν a hair outside its bounds
		r.Nu = min(max(r.Nu, float64(min(n1, n0)-1)), float64(n1+n0-2))
	case r.Diff > 0:
		r.T = math.Inf(1)
	case r.Diff < 0:
		r.T = math.Inf(-1)
	}
	r.Crit = tQuantile(1-delta, r.Nu)
	r.Larger = r.T > r.Crit
	return r, nil
}
