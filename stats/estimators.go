package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// VarianceMethod selects the estimator of σ̂_N in eq. (15).
type VarianceMethod int

const (
	IID  VarianceMethod = iota + 1 // sample variance, as if the Δ_k were independent
	BM                             // batch means, appendix A eq. (22)
	OLBM                           // overlapping batch means, appendix A eq. (23)
)

// String returns statopt's var_mode name: "iid", "bm" or "olbm".
func (m VarianceMethod) String() string {
	switch m {
	case IID:
		return "iid"
	case BM:
		return "bm"
	case OLBM:
		return "olbm"
	}
	return fmt.Sprintf("VarianceMethod(%d)", int(m))
}

// MarshalJSON writes the method by name ("bm"), so that run files and
// snapshots read as the settings a user types.
func (m VarianceMethod) MarshalJSON() ([]byte, error) {
	if m != IID && m != BM && m != OLBM {
		return nil, fmt.Errorf("stats: variance method = %d: must be IID, BM or OLBM", int(m))
	}
	return []byte(`"` + m.String() + `"`), nil
}

// UnmarshalJSON reads a name ("iid", "bm", "olbm") or, as files written
// before names were used hold, the number (1, 2, 3).
func (m *VarianceMethod) UnmarshalJSON(b []byte) error {
	var v VarianceMethod
	if len(b) > 0 && b[0] == '"' {
		var err error
		if v, err = ParseVarianceMethod(strings.Trim(string(b), `"`)); err != nil {
			return err
		}
	} else if n, err := strconv.Atoi(string(b)); err == nil && n >= int(IID) && n <= int(OLBM) {
		v = VarianceMethod(n)
	} else {
		return fmt.Errorf("stats: variance method = %s: must be one of \"iid\", \"bm\", \"olbm\"", b)
	}
	*m = v
	return nil
}

// ParseVarianceMethod parses "iid", "bm" or "olbm". statopt's "mb" (which
// statopt treats as "iid") is deliberately not accepted here.
func ParseVarianceMethod(s string) (VarianceMethod, error) {
	for _, m := range []VarianceMethod{IID, BM, OLBM} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("stats: variance method = %q: must be one of \"iid\", \"bm\", \"olbm\"", s)
}

// minN returns the smallest window the method accepts (dof ≥ 1).
func (m VarianceMethod) minN() int {
	if m == BM {
		return 4 // q = ⌊√N⌋ ≥ 2
	}
	return 2
}

// checkWindow returns an error if m is unknown or a window of n samples is
// too short for it: what Std and MeanInterval refuse first.
func (m VarianceMethod) checkWindow(n int) error {
	if m != IID && m != BM && m != OLBM {
		return fmt.Errorf("stats: variance method = %d: must be IID, BM or OLBM", int(m))
	}
	if n < m.minN() {
		return fmt.Errorf("stats: N = %d: %v needs N >= %d", n, m, m.minN())
	}
	return nil
}

// Mean returns the arithmetic mean of w (pairwise summation), NaN if w is empty.
func Mean(w []float64) float64 { return sum(w) / float64(len(w)) }

// sum is pairwise summation: error O(log N · ε) instead of O(N · ε).
func sum(x []float64) float64 {
	if len(x) > 128 {
		h := len(x) / 2 &^ 7
		return sum(x[:h]) + sum(x[h:])
	}
	var s [4]float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s[0] += x[i]
		s[1] += x[i+1]
		s[2] += x[i+2]
		s[3] += x[i+3]
	}
	for ; i < len(x); i++ {
		s[0] += x[i]
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// isqrt returns ⌊√n⌋ for n ≥ 0.
func isqrt(n int) int {
	q := int(math.Sqrt(float64(n)))
	for q*q > n {
		q--
	}
	for (q+1)*(q+1) <= n {
		q++
	}
	return q
}

// Std returns σ̂_N, the estimate of √N times the standard deviation of the
// mean of the window w (N = len(w)), and its degrees of freedom, as statopt's
// LeakyBucket.mean_std. mean must be Mean(w). With q = ⌊√N⌋:
//
//   - IID: sample standard deviation (ddof 1), dof = N−1; N ≥ 2.
//   - BM (eq. (22)): p = ⌊N/q⌋ disjoint batches of q samples from the start
//     of w (the last N−p·q samples are in no batch, but are in mean), batch
//     means Y_j; σ̂ = √(q/(p−1))·‖Y − mean‖ and dof = q−1 (statopt; appendix A
//     says p−1); N ≥ 4.
//   - OLBM (eq. (23)): Y_j = mean(w[j:j+q]), j = 0…N−q, M = N−q+1;
//     σ̂ = √(q·N/(M(M−1)))·‖Y − mean‖, dof = N−q; N ≥ 2.
//
// Each is O(N). It is an error if the method is unknown, N is below the
// method's minimum, or w or mean hold NaN or ±Inf.
func Std(m VarianceMethod, w []float64, mean float64) (std float64, dof int, err error) {
	n := len(w)
	if err := m.checkWindow(n); err != nil {
		return 0, 0, err
	}
	if !finite(mean) {
		return 0, 0, fmt.Errorf("stats: mean = %v: must be finite", mean)
	}
	q := isqrt(n)
	switch m {
	case IID:
		std, dof = math.Sqrt(sumSqDev(w, mean)/float64(n-1)), n-1
	case BM:
		p := n / q
		var ss float64
		for j := 0; j < p; j++ {
			d := sum(w[j*q:(j+1)*q])/float64(q) - mean
			ss += d * d
		}
		std, dof = math.Sqrt(float64(q)/float64(p-1))*math.Sqrt(ss), q-1
		if !finite(w[p*q:]...) {
			// the samples in no batch: in the mean only, so check them here
			return 0, 0, nonFinite("w", w)
		}
	case OLBM:
		// Sliding window sum of w[j:j+q], recomputed directly every q slides so
		// that rounding errors cannot accumulate along the series: 2N additions.
		mm := n - q + 1
		var ss float64
		for j0 := 0; j0 < mm; j0 += q {
			s := sum(w[j0 : j0+q])
			for j := j0; j < min(j0+q, mm); j++ {
				if j > j0 {
					s += w[j+q-1] - w[j-1]
				}
				d := s/float64(q) - mean
				ss += d * d
			}
		}
		std, dof = math.Sqrt(float64(q)*float64(n)/(float64(mm)*float64(mm-1)))*math.Sqrt(ss), n-q
	}
	if !finite(std) {
		return 0, 0, nonFinite("w", w)
	}
	return std, dof, nil
}

// sumSqDev returns Σ (x_i − c)².
func sumSqDev(x []float64, c float64) float64 {
	var s [4]float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		d0, d1, d2, d3 := x[i]-c, x[i+1]-c, x[i+2]-c, x[i+3]-c
		s[0] += d0 * d0
		s[1] += d1 * d1
		s[2] += d2 * d2
		s[3] += d3 * d3
	}
	for ; i < len(x); i++ {
		d := x[i] - c
		s[0] += d * d
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// finite reports whether every x is neither NaN nor ±Inf.
func finite(x ...float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// nonFinite explains a non-finite result computed from x: a NaN or ±Inf
// element, or else an overflow.
func nonFinite(name string, x []float64) error {
	if i := firstNonFinite(x); i >= 0 {
		return fmt.Errorf("stats: %s[%d] = %v: must be finite", name, i, x[i])
	}
	return fmt.Errorf("stats: %s: sums overflow float64 (|values| too large)", name)
}
