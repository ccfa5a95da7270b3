package direction

import (
	"fmt"
	"math"
	"strings"
)

// DoGConfig configures [DoG] (Ivgi, Hinder & Carmon 2023, "DoG is SGD's
// Best Friend: A Parameter-Free Dynamic Step Size Schedule").
type DoGConfig struct {
	// RepsRel sets the initial movement r_ε = RepsRel·(1 + ‖x_0‖): 1e-6 by
	// default, 1e-4 for models with batch normalization (the reference's
	// advice).
	RepsRel     float64
	Eps         float64 // ε > 0 added once to Σ‖g_i‖² (1e-8)
	WeightDecay float64 // L2 λ ≥ 0: g ← g + λx in place
}

// DefaultDoG returns the reference's defaults (dog-optimizer 1.0.3): lr
// (the paper's c) 1 — the scheduler's rate: run it under a constant
// schedule at 1, which the authors advise not to change — reps_rel = 1e-6,
// ε = 1e-8, weight decay 0. The authors also advise polynomial-decay
// iterate averaging on top: [PolyAverage] with γ = 8.
func DefaultDoG() DoGConfig { return DoGConfig{RepsRel: 1e-6, Eps: 1e-8} }

// Validate returns an error naming the first invalid field.
func (c DoGConfig) Validate() error {
	if err := checkPosFinite("DoGConfig.RepsRel", c.RepsRel); err != nil {
		return err
	}
	if err := checkPosFinite("DoGConfig.Eps", c.Eps); err != nil {
		return err
	}
	return checkRange("DoGConfig.WeightDecay", c.WeightDecay, 0, math.Inf(1), false, "[0, +Inf)")
}

// DoG is Distance over Gradients, SGD with the step
//
//	η_t = r̄_t / √(Σ_{i≤t} ‖g_i‖² + ε),    x_{t+1} = x_t − c η_t g_t
//	r̄_0 = r_ε = RepsRel·(1 + ‖x_0‖),       r̄_t = max(r̄_{t−1}, ‖x_t − x_0‖)
//
// with c the paper's multiplier (the reference's lr, 1 by default), taken
// over all parameters as one vector (DoG, not the layer-wise LDoG).
//
// # Mapping onto direction + step size
//
// η_t is intrinsic and c is the scheduler's rate α_k: Compute writes
// d = η_t g_t, and [Update](x, d, α_k) is DoG's step. Unlike the other
// [LRAware] directions DoG's state does not depend on α_k; SetLR only
// records it for EffectiveLR (= α_k η_t). [DoG.Eta] is η_t.
type DoG[T Float] struct {
	cfg  DoGConfig
	n    int
	lr   float64
	init bool
	t    uint64
	rbar float64 // r̄_t
	gsum float64 // Σ‖g_i‖² + ε
	eta  float64 // η_t of the last step
	x0   []T
}

var _ LRAware[float64] = (*DoG[float64])(nil)

// NewDoG returns a DoG direction for n parameters.
func NewDoG[T Float](cfg DoGConfig, n int) (*DoG[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	return &DoG[T]{cfg: cfg, n: n, lr: 1, x0: make([]T, n)}, nil
}

// Config returns the configuration.
func (o *DoG[T]) Config() DoGConfig { return o.cfg }

// Len returns the number of parameters n.
func (o *DoG[T]) Len() int { return o.n }

// Steps returns the number of steps taken since creation or Reset.
func (o *DoG[T]) Steps() uint64 { return o.t }

// Eta returns η_t of the last step (0 before the first).
func (o *DoG[T]) Eta() float64 { return o.eta }

// RBar returns r̄_t of the last step.
func (o *DoG[T]) RBar() float64 { return o.rbar }

// SetLR records α_k (the paper's c) for EffectiveLR.
func (o *DoG[T]) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	o.lr = lr
	return nil
}

// LR returns the rate last set.
func (o *DoG[T]) LR() float64 { return o.lr }

// EffectiveLR returns α_k η_t of the last step.
func (o *DoG[T]) EffectiveLR() float64 { return o.lr * o.eta }

// Reset makes the direction fresh: x_0 is taken again at the next Compute.
func (o *DoG[T]) Reset() {
	clear(o.x0)
	o.init, o.t, o.rbar, o.gsum, o.eta = false, 0, 0, 0, 0
}

// Compute writes d = η_t g_t into d; see [DoG] and [Direction.Compute].
func (o *DoG[T]) Compute(d, g, x []T) error {
	if err := checkArgs(o.n, d, g, x); err != nil {
		return err
	}
	n := o.n
	d, g, x = d[:n], g[:n], x[:n]
	rbar, gsum, eta, err := o.next(g, x)
	if err != nil {
		return err
	}
	if o.cfg.WeightDecay != 0 {
		wd := T(o.cfg.WeightDecay)
		for i := range g {
			g[i] += T(wd * x[i])
		}
	}
	if !o.init {
		copy(o.x0[:n], x)
		o.init = true
	}
	o.rbar, o.gsum, o.eta = rbar, gsum, eta
	o.t++
	e := T(o.eta)
	for i := range g {
		d[i] = T(e * g[i])
	}
	return nil
}

// next returns the step's r̄, Σ‖g‖² (of g with its weight decay) and η
// without writing anything, or an error if one would not be finite.
func (o *DoG[T]) next(g, x []T) (rbar, gsum, eta float64, err error) {
	wd := T(o.cfg.WeightDecay)
	var n2 float64
	for i := range g {
		gi := g[i]
		if o.cfg.WeightDecay != 0 {
			gi += T(wd * x[i])
		}
		if !finite(float64(gi)) {
			return 0, 0, 0, overflow(fmt.Sprintf("DoG's g[%d] + λx[%d]", i, i), float64(gi))
		}
		n2 += float64(float64(gi) * float64(gi))
	}
	if !o.init {
		rbar = o.cfg.RepsRel * (1 + math.Sqrt(norm2(x)))
		gsum = n2 + o.cfg.Eps
	} else {
		var r2 float64
		for i := range x {
			di := float64(x[i] - o.x0[i])
			r2 += float64(di * di)
		}
		rbar = math.Max(o.rbar, math.Sqrt(r2))
		gsum = o.gsum + n2
	}
	if eta = rbar / math.Sqrt(gsum); !finite(rbar) || !finite(gsum) || !finite(eta) || eta == 0 {
		return 0, 0, 0, overflow("DoG's r̄, Σ‖g‖² or η", eta)
	}
	return rbar, gsum, eta, nil
}

const dogMagic = "DDOG"

// MarshalBinary writes a versioned snapshot of the configuration, r̄, Σ‖g‖²
// and x_0.
func (o *DoG[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](dogMagic)
	for _, f := range []float64{o.cfg.RepsRel, o.cfg.Eps, o.cfg.WeightDecay, o.lr} {
		e.f64(f)
	}
	e.u64(boolU64(o.init))
	e.u64(o.t)
	for _, f := range []float64{o.rbar, o.gsum, o.eta} {
		e.f64(f)
	}
	e.u64(uint64(o.n))
	encVec(e, o.x0)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero DoG; on error o is unchanged.
func (o *DoG[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, dogMagic, "DoG")
	var c DoGConfig
	c.RepsRel, c.Eps, c.WeightDecay = d.f64(), d.f64(), d.f64()
	lr := d.f64()
	init := d.flag("started")
	t := d.u64()
	rbar, gsum, eta := d.scalar("rbar", true), d.scalar("G", true), d.scalar("eta", true)
	n := d.size()
	if d.err == nil {
		if err := c.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		} else if checkLR(lr) != nil {
			d.fail("DoG snapshot lr = %v: must be finite and > 0", lr)
		} else if init && !(gsum > 0) {
			d.fail("DoG snapshot G = %v: must be > 0", gsum)
		}
	}
	x0 := decVec[T](d, n)
	if err := d.done(); err != nil {
		return err
	}
	*o = DoG[T]{cfg: c, n: n, lr: lr, init: init, t: t, rbar: rbar, gsum: gsum, eta: eta, x0: orEmpty(x0, n)}
	return nil
}
