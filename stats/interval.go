package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is the (1−δ) confidence interval μ̂_N ± ω_N of E[Δ], eq.
// (15), with ω_N = σ̂_N·t*_{1−δ/2, dof}/√N.
type Interval struct {
	N         int     // window length
	Mean, Std float64 // μ̂_N and σ̂_N
	Dof       int     // degrees of freedom of σ̂_N
	HalfWidth float64 // ω_N
	Lower     float64 // μ̂_N − ω_N
	Upper     float64 // μ̂_N + ω_N
	Mean1     float64 // mean(w[:N/2]), for statopt's sign check
	Mean2     float64 // mean(w[N/2:])
}

// MeanInterval returns the (1−δ) confidence interval of the mean of w with
// σ̂_N from Std(m, …), as statopt's stats_test (which takes t* from scipy's
// t.ppf; see TQuantile for the difference). It is an error if δ is not in
// (0, 1), m is unknown, w is too short for m, w holds NaN or ±Inf, or t*
// overflows (δ ≲ 1e-150 at dof 1).
func MeanInterval(w []float64, m VarianceMethod, delta float64) (Interval, error) {
	if !(delta > 0 && delta < 1) {
		return Interval{}, fmt.Errorf("stats: delta = %v: must be in (0, 1)", delta)
	}
	n := len(w)
	if err := m.checkWindow(n); err != nil {
		return Interval{}, err
	}
	mean := Mean(w)
	if !finite(mean) {
		return Interval{}, nonFinite("w", w)
	}
	std, dof, err := Std(m, w, mean)
	if err != nil {
		return Interval{}, err
	}
	// t*_{1−δ/2} as −t*_{δ/2}: the same number, without rounding 1−δ/2 to 1 for tiny δ.
	tq := -TQuantile(delta/2, dof)
	if !finite(tq) {
		return Interval{}, fmt.Errorf("stats: delta = %v: the t quantile with dof %d overflows", delta, dof)
	}
	hw := std * tq / math.Sqrt(float64(n))
	iv := Interval{
		N: n, Mean: mean, Std: std, Dof: dof, HalfWidth: hw,
		Lower: mean - hw, Upper: mean + hw,
		Mean1: Mean(w[:n/2]), Mean2: Mean(w[n/2:]),
	}
	if !finite(iv.HalfWidth, iv.Lower, iv.Upper, iv.Mean1, iv.Mean2) {
		return Interval{}, nonFinite("w", w)
	}
	return iv, nil
}

// Stationary is SASA+'s decision (Algorithm 1: drop when 0 ∈ μ̂_N ± ω_N, as
// the open interval Lower < 0 < Upper) with statopt's two stabilizers:
//
//   - signCheck also requires Mean1·Mean2 > 0 (both half-window means on the
//     same side of 0);
//   - composite (statopt before the first drop) replaces Lower < 0 < Upper by
//     (Mean1−ω)(Mean1+ω) < 0 and (Mean2−ω)(Mean2+ω) < 0.
//
// statopt's rule is signCheck = true, composite = true until the first drop.
func (iv Interval) Stationary(signCheck, composite bool) bool {
	hw := iv.HalfWidth
	var ok bool
	if composite {
		ok = (iv.Mean1-hw)*(iv.Mean1+hw) < 0 && (iv.Mean2-hw)*(iv.Mean2+hw) < 0
	} else {
		ok = iv.Lower < 0 && 0 < iv.Upper
	}
	return ok && (!signCheck || iv.Mean1*iv.Mean2 > 0)
}

// Equivalent is SASA's equivalence test (Lang et al. 2019; appendix B.1 eq.
// (27)): [Lower, Upper] ⊂ [−margin, margin], margin = ζ·ν̄_N. A
// negative or NaN margin gives false.
func (iv Interval) Equivalent(margin float64) bool {
	return -margin <= iv.Lower && iv.Upper <= margin
}

// TQuantile returns the p-quantile t*_p of Student's t distribution with dof
// degrees of freedom: −Inf at p = 0, +Inf at p = 1 or beyond ±1e150, NaN if
// p is outside [0, 1] or NaN, or dof < 1.
//
// It starts from gonum's distuv.StudentsT.Quantile and refines it with Newton
// steps on gonum's CDF (bisection if Newton fails), so it is as accurate as
// TCDF: ≤ 1e-13 relative for dof ≤ 112, ≤ 4e-13 up to dof 1000 (gonum's
// inverse alone is off by up to 3e-6 for dof ≥ 500, and by 12× at p = 1e-10,
// dof = 1e5). statopt's scipy 1.10 t.ppf is less accurate: up to 5e-9
// relative off, 2e-11 at p = 0.975, so half-widths differ from statopt's by
// that much.
func TQuantile(p float64, dof int) float64 {
	if dof < 1 {
		return math.NaN()
	}
	return tQuantile(p, float64(dof))
}

// tQuantile is [TQuantile] at a real ν ≥ 1 degrees of freedom (Welch's test
// has a fractional ν); NaN for ν < 1 or p outside [0, 1].
func tQuantile(p, nu float64) float64 {
	if !(nu >= 1) || math.IsInf(nu, 0) || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	switch p {
	case 0:
		return math.Inf(-1)
	case 1:
		return math.Inf(1)
	}
	d := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}
	f := func(t float64) float64 { // F(t) − p, via the small tail for p > 1/2
		if p > 0.5 {
			return (1 - p) - d.Survival(t)
		}
		return d.CDF(t) - p
	}
	q := d.Quantile(p)
	e := f(q)
	for i := 0; i < 4 && e != 0; i++ { // keep a step only if it reduces |F(q) − p|
		qn := q - e/d.Prob(q)
		if !finite(qn) {
			break
		}
		if en := f(qn); math.Abs(en) < math.Abs(e) {
			q, e = qn, en
		} else {
			break
		}
	}
	if finite(q) && math.Abs(e) <= 1e-8*min(p, 1-p) {
		return q
	}
	// Newton failed (gonum far off): bisect F on a bracket grown from 0. gonum's
	// CDF saturates for |t| ≳ 1.3e154 (t² overflows), so quantiles beyond
	// ±1e150 are reported as ±Inf.
	const tMax = 1e150
	lo, hi := 0.0, 1.0
	if p < 0.5 {
		lo, hi = -1, 0
	}
	for f(hi) < 0 {
		if hi > tMax {
			return math.Inf(1)
		}
		lo, hi = hi, 2*hi
	}
	for f(lo) > 0 {
		if lo < -tMax {
			return math.Inf(-1)
		}
		lo, hi = 2*lo, lo
	}
	for {
		m := lo + (hi-lo)/2
		if !(lo < m && m < hi) {
			return m
		}
		if f(m) < 0 {
			lo = m
		} else {
			hi = m
		}
	}
}

// TCDF returns P(T ≤ t) for Student's t with dof degrees of freedom (gonum
// distuv.StudentsT); NaN if t is NaN or dof < 1.
func TCDF(t float64, dof int) float64 {
	if dof < 1 || math.IsNaN(t) {
		return math.NaN()
	}
	switch {
	case math.IsInf(t, 1):
		return 1
	case math.IsInf(t, -1):
		return 0
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(dof)}.CDF(t)
}
