package direction

import (
	"fmt"
	"math"
)

// PolyAverage is polynomial-decay iterate averaging (Shamir & Zhang 2013),
// which the DoG authors pair with [DoG] ("for best performance DoG must be
// combined with iterate averaging"; their PolynomialDecayAverager, γ = 8):
//
//	x̄_t = (1 − (1+γ)/(t+γ)) x̄_{t−1} + (1+γ)/(t+γ) x_t,   t = 1, 2, …
//
// so x̄_1 = x_1. Call Add with the parameters after each update; evaluate at
// x̄ (Eval copies it into the parameters; recompute batch-norm statistics
// there, as for [ScheduleFree]). It is not a [Direction]: it never changes
// the training iterate.
type PolyAverage[T Float] struct {
	gamma float64
	n     int
	t     uint64 // averages taken
	avg   []T
}

// DefaultPolyGamma is the reference's γ = 8.
const DefaultPolyGamma = 8.0

// NewPolyAverage returns an averager of n parameters with decay γ ≥ 0.
func NewPolyAverage[T Float](gamma float64, n int) (*PolyAverage[T], error) {
	if err := checkRange("PolyAverage gamma", gamma, 0, math.Inf(1), false, "[0, +Inf)"); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	return &PolyAverage[T]{gamma: gamma, n: n, avg: make([]T, n)}, nil
}

// Steps returns the number of iterates averaged.
func (a *PolyAverage[T]) Steps() uint64 { return a.t }

// Average returns x̄ (zeros before the first Add). It is a view.
func (a *PolyAverage[T]) Average() []T { return a.avg }

// Add folds the iterate x into the average. On a length mismatch or a
// non-finite x it returns an error and changes nothing.
func (a *PolyAverage[T]) Add(x []T) error {
	if len(x) != a.n {
		return fmt.Errorf("direction: PolyAverage.Add: len(x) = %d: must equal n = %d", len(x), a.n)
	}
	if i := firstNonFinite(x); i >= 0 {
		return fmt.Errorf("direction: PolyAverage.Add: x[%d] = %v: %w", i, x[i], ErrNonFinite)
	}
	a.t++
	w := (a.gamma + 1) / (a.gamma + float64(a.t))
	tw, cw := T(w), T(1-w)
	for i, xi := range x {
		a.avg[i] = T(cw*a.avg[i]) + T(tw*xi)
	}
	return nil
}

// Eval copies x̄ into p; before the first Add it leaves p as it is.
func (a *PolyAverage[T]) Eval(p []T) error {
	if len(p) != a.n {
		return fmt.Errorf("direction: PolyAverage.Eval: len(p) = %d: must equal n = %d", len(p), a.n)
	}
	if a.t > 0 {
		copy(p, a.avg)
	}
	return nil
}

// Reset restarts the average at t = 0.
func (a *PolyAverage[T]) Reset() {
	clear(a.avg)
	a.t = 0
}

const polyMagic = "DPAV"

// MarshalBinary writes a versioned snapshot of γ, t and x̄.
func (a *PolyAverage[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](polyMagic)
	e.f64(a.gamma)
	e.u64(a.t)
	e.u64(uint64(a.n))
	encVec(e, a.avg)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T; on error a is unchanged.
func (a *PolyAverage[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, polyMagic, "PolyAverage")
	gamma := d.f64()
	t := d.u64()
	n := d.size()
	if d.err == nil && (!(gamma >= 0) || math.IsInf(gamma, 0)) {
		d.fail("PolyAverage snapshot gamma = %v: must be in [0, +Inf)", gamma)
	}
	avg := decVec[T](d, n)
	if err := d.done(); err != nil {
		return err
	}
	*a = PolyAverage[T]{gamma: gamma, n: n, t: t, avg: orEmpty(avg, n)}
	return nil
}
