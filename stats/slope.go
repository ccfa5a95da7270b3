package stats

import (
	"fmt"
	"math"
)

// SlopeResult is the outcome of the SLOPE test.
type SlopeResult struct {
	N          int     // number of losses
	Slope      float64 // least-squares slope ĉ_1
	R          float64 // correlation coefficient, clipped to [−1, 1]
	T          float64 // t statistic
	Prob       float64 // one-sided P(T_{N−2} ≤ t)
	Dof        int     // N − 2
	Decreasing bool    // Prob < δ: the null c_1 ≥ 0 is rejected, keep the learning rate
}

// SlopeTest is the SLOPE test of §2.2 (eq. (16); appendix A, "Slope
// test for linear regression") on the losses y at abscissae x_i = x0 + i,
// computed as statopt's linregress (scipy.stats.linregress of that era): with
// population (1/N) covariances, r = cov_xy/√(cov_xx·cov_yy) clipped to
// [−1, 1] (0 if the denominator is 0), t = r·√((N−2)/((1−r+1e−20)(1+r+1e−20))),
// Prob = TCDF(t, N−2), Slope = cov_xy/cov_xx and Decreasing = Prob < δ.
//
// The test is invariant to the shift x0 (statopt's total−N), which is only
// checked to be finite. It is an error if δ is not in (0, 1), N < 3, or y
// holds NaN or ±Inf. O(N).
func SlopeTest(y []float64, x0, delta float64) (SlopeResult, error) {
	const tiny = 1e-20
	n := len(y)
	switch {
	case !(delta > 0 && delta < 1):
		return SlopeResult{}, fmt.Errorf("stats: delta = %v: must be in (0, 1)", delta)
	case n < 3:
		return SlopeResult{}, fmt.Errorf("stats: N = %d: the slope test needs N >= 3", n)
	case math.IsNaN(x0) || math.IsInf(x0, 0):
		return SlopeResult{}, fmt.Errorf("stats: x0 = %v: must be finite", x0)
	}
	fn := float64(n)
	ybar := Mean(y)
	c := (fn - 1) / 2 // mean of i = 0…N−1
	var sxy, syy float64
	for i, v := range y {
		dy := v - ybar
		sxy += (float64(i) - c) * dy
		syy += dy * dy
	}
	covXY, covYY := sxy/fn, syy/fn
	covXX := (fn*fn - 1) / 12 // (1/N) Σ (i − c)², exact
	if !finite(ybar, covXY, covYY) {
		return SlopeResult{}, nonFinite("y", y)
	}
	r := 0.0
	den := math.Sqrt(covXX * covYY) // scipy's (and statopt's) form, bit for bit
	if math.IsInf(den, 0) {
		// The product overflows for |losses| near 1e152 and would make
		// r = 0, a "not decreasing" verdict: take the roots apart.
		den = math.Sqrt(covXX) * math.Sqrt(covYY)
	}
	if den != 0 {
		r = max(-1, min(1, covXY/den))
	}
	dof := n - 2
	t := r * math.Sqrt(float64(dof)/((1-r+tiny)*(1+r+tiny)))
	prob := TCDF(t, dof)
	return SlopeResult{N: n, Slope: covXY / covXX, R: r, T: t, Prob: prob, Dof: dof, Decreasing: prob < delta}, nil
}
