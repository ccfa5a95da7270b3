package direction

import (
	"fmt"
	"math"
	"strings"
)

// AdamConfig configures [Adam].
type AdamConfig struct {
	Beta1       float64 // β1 in [0, 1), first-moment decay
	Beta2       float64 // β2 in [0, 1), second-moment decay
	Eps         float64 // ε in (0, +Inf), added to sqrt(v̂)
	WeightDecay float64 // wd ≥ 0: L2 (Adam) or decoupled (AdamW)
	Decoupled   bool    // AdamW: d ← d + wd·x instead of g ← g + wd·x
}

// DefaultAdam returns β1 = 0.9, β2 = 0.999, ε = 1e-8, no weight decay.
func DefaultAdam() AdamConfig { return AdamConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8} }

// Validate returns an error naming the first invalid field.
func (c AdamConfig) Validate() error {
	if err := checkRange("AdamConfig.Beta1", c.Beta1, 0, 1, false, "[0, 1)"); err != nil {
		return err
	}
	if err := checkRange("AdamConfig.Beta2", c.Beta2, 0, 1, false, "[0, 1)"); err != nil {
		return err
	}
	if !(c.Eps > 0) || math.IsInf(c.Eps, 0) {
		return fmt.Errorf("direction: AdamConfig.Eps = %v: must be in (0, +Inf)", c.Eps)
	}
	return checkRange("AdamConfig.WeightDecay", c.WeightDecay, 0, math.Inf(1), false, "[0, +Inf)")
}

// Adam is the Adam direction (Kingma & Ba 2014), or AdamW (Loshchilov &
// Hutter 2019) when Decoupled, a baseline outside the paper's QHM family:
//
//	g ← g + wd·x                      (L2 mode, in place, as in QHM)
//	m ← β1 m + (1−β1) g ;  v ← β2 v + (1−β2) g²
//	d = (m/(1−β1^t)) / (sqrt(v)/sqrt(1−β2^t) + ε)
//	d ← d + wd·x                      (decoupled mode; g is left as is)
//
// with t the number of Compute calls since creation or [Adam.Reset]. This is
// torch.optim.Adam's formula with the step size left to the caller; AdamW's
// x ← x − α(d + wd·x) equals PyTorch's x ← x(1 − α·wd) − α·d up to rounding.
type Adam[T Float] struct {
	cfg  AdamConfig
	n    int
	t    uint64 // step count t
	m, v []T
}

var _ Direction[float64] = (*Adam[float64])(nil)

// NewAdam returns an Adam direction for n parameters with zero moments.
func NewAdam[T Float](cfg AdamConfig, n int) (*Adam[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	return &Adam[T]{cfg: cfg, n: n, m: make([]T, n), v: make([]T, n)}, nil
}

// Config returns the configuration.
func (a *Adam[T]) Config() AdamConfig { return a.cfg }

// Len returns the number of parameters n.
func (a *Adam[T]) Len() int { return a.n }

// Steps returns t, the number of Compute calls since creation or Reset.
func (a *Adam[T]) Steps() uint64 { return a.t }

// Reset zeroes both moments and the step count.
func (a *Adam[T]) Reset() {
	clear(a.m)
	clear(a.v)
	a.t = 0
}

// Compute writes d_k into d; see [Direction.Compute].
func (a *Adam[T]) Compute(d, g, x []T) error {
	if err := checkArgs(a.n, d, g, x); err != nil {
		return err
	}
	n := a.n
	d, g, x = d[:n], g[:n], x[:n]
	m, v := a.m[:n], a.v[:n]
	c := a.cfg
	tf := float64(a.t + 1) // t after this step
	bc1 := T(1 - math.Pow(c.Beta1, tf))
	bc2 := T(math.Sqrt(1 - math.Pow(c.Beta2, tf)))
	b1, cb1 := T(c.Beta1), T(1-c.Beta1)
	b2, cb2 := T(c.Beta2), T(1-c.Beta2)
	eps, wd := T(c.Eps), T(c.WeightDecay)
	l2 := c.WeightDecay != 0 && !c.Decoupled
	dec := c.WeightDecay != 0 && c.Decoupled
	for i := range g { // the new moments, checked before anything is written
		gi := g[i]
		if l2 {
			gi += T(wd * x[i])
		}
		if mi := T(b1*m[i]) + T(cb1*gi); !finite(float64(mi)) {
			return overflow(fmt.Sprintf("Adam's m[%d]", i), float64(mi))
		}
		if vi := T(b2*v[i]) + T(cb2*T(gi*gi)); !finite(float64(vi)) {
			return overflow(fmt.Sprintf("Adam's v[%d]", i), float64(vi))
		}
	}
	a.t++
	for i := range g {
		gi := g[i]
		if l2 {
			gi += T(wd * x[i])
			g[i] = gi
		}
		mi := T(b1*m[i]) + T(cb1*gi)
		vi := T(b2*v[i]) + T(cb2*T(gi*gi))
		m[i], v[i] = mi, vi
		di := (mi / bc1) / (T(math.Sqrt(float64(vi)))/bc2 + eps)
		if dec {
			di += T(wd * x[i])
		}
		d[i] = di
	}
	return nil
}

const adamMagic = "DADM"

// MarshalBinary writes a versioned snapshot of the configuration, t, m and v.
func (a *Adam[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](adamMagic)
	e.f64(a.cfg.Beta1)
	e.f64(a.cfg.Beta2)
	e.f64(a.cfg.Eps)
	e.f64(a.cfg.WeightDecay)
	var dec uint64
	if a.cfg.Decoupled {
		dec = 1
	}
	e.u64(dec)
	e.u64(a.t)
	e.u64(uint64(a.n))
	encVec(e, a.m)
	encVec(e, a.v)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero Adam; on error a is unchanged.
func (a *Adam[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, adamMagic, "Adam")
	cfg := AdamConfig{Beta1: d.f64(), Beta2: d.f64(), Eps: d.f64(), WeightDecay: d.f64()}
	switch dc := d.u64(); dc {
	case 0, 1:
		cfg.Decoupled = dc == 1
	default:
		d.fail("Adam snapshot Decoupled flag %d: want 0 or 1", dc)
	}
	t := d.u64()
	n := d.u64()
	if d.err == nil && n > maxSize {
		d.fail("Adam snapshot size %d too large", n)
	}
	if d.err == nil {
		if err := cfg.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		}
	}
	m := decVec[T](d, int(n))
	v := decVec[T](d, int(n))
	if err := d.done(); err != nil {
		return err
	}
	if n == 0 {
		m, v = []T{}, []T{}
	}
	a.cfg, a.t, a.n, a.m, a.v = cfg, t, int(n), m, v
	return nil
}
