package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// PairedZ is a one-sided large-sample test that the mean of paired
// differences d_i is positive: z = d̄/(s_d/√n), with s_d the sample
// standard deviation (ddof 1), rejected in favour of a positive mean when
// z > z*_{1−δ}, the standard normal quantile.
type PairedZ struct {
	N         int     // pairs
	Mean, Std float64 // d̄ and s_d
	Z         float64 // d̄/(s_d/√n); 0 when s_d = 0 and d̄ = 0, ±Inf when only s_d = 0
	Crit      float64 // z*_{1−δ}
	Positive  bool    // Z > Crit: the mean is positive at level δ
}

// PairedZTest is [PairedZ] on the differences d (b_i − a_i for pairs
// where positive means b is better). It is an error if δ is not in (0, 1),
// d has fewer than 2 values, or d holds NaN or ±Inf.
func PairedZTest(d []float64, delta float64) (PairedZ, error) {
	if !(delta > 0 && delta < 1) {
		return PairedZ{}, fmt.Errorf("stats: delta = %v: must be in (0, 1)", delta)
	}
	n := len(d)
	if n < 2 {
		return PairedZ{}, fmt.Errorf("stats: %d paired differences: need ≥ 2", n)
	}
	if !finite(d...) {
		return PairedZ{}, nonFinite("d", d)
	}
	mean := Mean(d)
	std := math.Sqrt(sumSqDev(d, mean) / float64(n-1))
	if !finite(mean, std) {
		return PairedZ{}, nonFinite("d", d)
	}
	r := PairedZ{N: n, Mean: mean, Std: std, Crit: NormalQuantile(1 - delta)}
	switch {
	case std > 0:
		r.Z = mean / (std / math.Sqrt(float64(n)))
	case mean > 0:
		r.Z = math.Inf(1)
	case mean < 0:
		r.Z = math.Inf(-1)
	}
	r.Positive = r.Z > r.Crit
	return r, nil
}

// NormalQuantile is the standard normal quantile Φ⁻¹(p) (gonum's
// distuv.UnitNormal); NaN outside [0, 1].
func NormalQuantile(p float64) float64 {
	if !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	return distuv.UnitNormal.Quantile(p)
}
