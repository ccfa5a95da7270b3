package direction

import (
	"fmt"
	"math"
	"strings"
)

// DAdaptSGDConfig configures [DAdaptSGD] (Defazio & Mishchenko 2023,
// "Learning-Rate-Free Learning by D-Adaptation", SGD form).
type DAdaptSGDConfig struct {
	// Momentum β ∈ [0, 1): x_{k+1} = β x_k + (1−β) z_{k+1}, the primal
	// averaging form of momentum of the reference; 0 is plain SGD.
	Momentum    float64
	WeightDecay float64 // L2 λ ≥ 0: g ← g + λx in place
	D0          float64 // d_0 > 0 (1e-6)
	GrowthRate  float64 // ≥ 1: d_{k+1} ≤ GrowthRate·d_k; +Inf for no limit
}

// DefaultDAdaptSGD returns the reference's DAdaptSGD defaults
// (dadaptation 3.x): lr 1 (the scheduler's rate: run it under a constant
// schedule at 1; its README says to keep the schedule one would normally
// use), momentum 0, weight decay 0, d_0 = 1e-6, growth rate +Inf.
func DefaultDAdaptSGD() DAdaptSGDConfig {
	return DAdaptSGDConfig{D0: 1e-6, GrowthRate: math.Inf(1)}
}

// Validate returns an error naming the first invalid field.
func (c DAdaptSGDConfig) Validate() error {
	if err := checkRange("DAdaptSGDConfig.Momentum", c.Momentum, 0, 1, false, "[0, 1)"); err != nil {
		return err
	}
	if err := checkRange("DAdaptSGDConfig.WeightDecay", c.WeightDecay, 0, math.Inf(1), false, "[0, +Inf)"); err != nil {
		return err
	}
	if err := checkPosFinite("DAdaptSGDConfig.D0", c.D0); err != nil {
		return err
	}
	return checkGrowth("DAdaptSGDConfig.GrowthRate", c.GrowthRate)
}

// DAdaptSGD is SGD with D-Adaptation: the step λ_k = α_k d_k/‖g_0‖ uses a
// lower bound d_k on the distance D = ‖x_0 − x*‖ that grows as the
// iterates move. With α_k the scheduler's rate (its "lr", 1 by default):
//
//	λ_k = α_k d_k / ‖g_0‖
//	r_{k+1} = r_k + λ_k ⟨g_k, s_k⟩
//	s_{k+1} = s_k + λ_k g_k
//	d̂_{k+1} = 2 r_{k+1} / ‖s_{k+1}‖
//	d_{k+1} = max(d_k, min(d̂_{k+1}, GrowthRate·d_k))
//	z_{k+1} = x_0 − s_{k+1}
//	x_{k+1} = β x_k + (1−β) z_{k+1}
//
// which with β = 0 is x_{k+1} = x_k − λ_k g_k. Since
// ‖s_{k+1}‖² − Σλ_i²‖g_i‖² = 2Σλ_i⟨g_i, s_i⟩, 2r/‖s‖ is twice the paper's
// estimate (‖s‖² − Σλ²‖g‖²)/(2‖s‖) for GD; the factor 2 is the
// reference's (dadapt_sgd.py, version 3), whose update this follows.
//
// # Mapping onto direction + step size
//
// The step size d_k/‖g_0‖ is intrinsic; the scheduler supplies the
// multiplier α_k (via [LRAware]: SetLR before Compute), which also enters s
// and r. Compute writes d = (x_k − x_{k+1})/α_k, so that [Update](x, d,
// α_k) moves the parameters to the reference's x_{k+1} (which re-anchors
// them to x_0 − s each step); [DAdaptSGD.D] is d_k and EffectiveLR is λ_k.
//
// ‖g_0‖ is the norm of the first gradient with its L2 term (the
// reference's first-step norm leaves the L2 term out: a quirk of an
// out-of-place add). While ‖g_0‖ = 0 Compute writes d = 0 and waits for a
// nonzero gradient.
type DAdaptSGD[T Float] struct {
	cfg   DAdaptSGDConfig
	n     int
	lr    float64
	init  bool // x0 and g0 are set
	t     uint64
	g0    float64 // ‖g_0‖
	dk    float64
	r     float64 // numerator_weighted
	dhat  float64
	step  float64 // λ_k of the last step
	x0, s []T
}

var _ LRAware[float64] = (*DAdaptSGD[float64])(nil)

// NewDAdaptSGD returns a D-Adapted SGD direction for n parameters.
func NewDAdaptSGD[T Float](cfg DAdaptSGDConfig, n int) (*DAdaptSGD[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	a := &DAdaptSGD[T]{cfg: cfg, n: n, lr: 1, x0: make([]T, n), s: make([]T, n)}
	a.Reset()
	return a, nil
}

// Config returns the configuration.
func (a *DAdaptSGD[T]) Config() DAdaptSGDConfig { return a.cfg }

// Len returns the number of parameters n.
func (a *DAdaptSGD[T]) Len() int { return a.n }

// Steps returns the number of steps taken since creation or Reset.
func (a *DAdaptSGD[T]) Steps() uint64 { return a.t }

// D returns the current lower bound d_k.
func (a *DAdaptSGD[T]) D() float64 { return a.dk }

// SetLR sets α_k for the next Compute.
func (a *DAdaptSGD[T]) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	a.lr = lr
	return nil
}

// LR returns the rate the next Compute uses.
func (a *DAdaptSGD[T]) LR() float64 { return a.lr }

// EffectiveLR returns λ_k = α_k d_k/‖g_0‖ of the last step.
func (a *DAdaptSGD[T]) EffectiveLR() float64 { return a.step }

// Reset makes the direction fresh (d = d_0, s = 0, x_0 and g_0 taken again).
// The rate set by SetLR is kept.
func (a *DAdaptSGD[T]) Reset() {
	clear(a.x0)
	clear(a.s)
	a.init, a.t, a.g0, a.r, a.step = false, 0, 0, 0, 0
	a.dk, a.dhat = a.cfg.D0, a.cfg.D0
}

// Compute writes d_k into d; see [DAdaptSGD] and [Direction.Compute].
func (a *DAdaptSGD[T]) Compute(d, g, x []T) error {
	if err := checkArgs(a.n, d, g, x); err != nil {
		return err
	}
	n := a.n
	d, g, x = d[:n], g[:n], x[:n]
	x0, s := a.x0[:n], a.s[:n]
	c := a.cfg
	g0, ip, s2, err := a.next(g, x)
	if err != nil {
		return err
	}
	if c.WeightDecay != 0 {
		wd := T(c.WeightDecay)
		for i := range g {
			g[i] += T(wd * x[i])
		}
	}
	if !a.init {
		if g0 == 0 {
			clear(d)
			return nil
		}
		copy(x0, x)
		a.g0, a.init = g0, true
	}
	dlr := a.dk * a.lr / a.g0
	tl := T(dlr)
	for i := range g {
		s[i] += T(tl * g[i])
	}
	a.r += dlr * ip
	if s2 > 0 {
		a.dhat = 2 * a.r / math.Sqrt(s2)
		a.dk = math.Max(a.dk, math.Min(a.dhat, a.dk*c.GrowthRate))
	}
	a.step = dlr
	a.t++
	b, cb := T(c.Momentum), T(1-c.Momentum)
	inv := 1 / a.lr
	for i := range d {
		zi := x0[i] - s[i]
		xn := zi
		if c.Momentum != 0 {
			xn = T(b*x[i]) + T(cb*zi)
		}
		d[i] = T(float64(x[i]-xn) * inv)
	}
	return nil
}

// next returns what the step's update of the state needs, computed from g
// with its weight decay and without writing anything: ‖g_0‖ (this step's
// before the first; 0 there means a zero gradient, which Compute skips),
// ⟨g, s⟩ with the old s and ‖s‖² with the new. It returns an error if s or
// an estimate would not be finite.
func (a *DAdaptSGD[T]) next(g, x []T) (g0, ip, s2 float64, err error) {
	c := a.cfg
	wd := T(c.WeightDecay)
	grad := func(i int) T {
		if c.WeightDecay != 0 {
			return g[i] + T(wd*x[i])
		}
		return g[i]
	}
	g0 = a.g0
	if !a.init {
		var n2 float64
		for i := range g {
			gi := grad(i)
			n2 += float64(float64(gi) * float64(gi))
		}
		if g0 = math.Sqrt(n2); g0 == 0 {
			return 0, 0, 0, nil
		}
		if !finite(g0) {
			return 0, 0, 0, overflow("D-Adaptation's ‖g_0‖", g0)
		}
	}
	dlr := a.dk * a.lr / g0
	tl := T(dlr)
	for i := range g {
		gi := grad(i)
		ip += float64(float64(gi) * float64(a.s[i]))
		si := a.s[i] + T(tl*gi)
		if !finite(float64(si)) {
			return 0, 0, 0, overflow(fmt.Sprintf("D-Adaptation's s[%d]", i), float64(si))
		}
		s2 += float64(float64(si) * float64(si))
	}
	if r := a.r + dlr*ip; !finite(r) || !finite(s2) || !finite(dlr) {
		return 0, 0, 0, overflow("D-Adaptation's estimate of D", r/math.Sqrt(s2))
	}
	return g0, ip, s2, nil
}

const dadaptMagic = "DDAS"

// MarshalBinary writes a versioned snapshot of the configuration, the rate,
// ‖g_0‖, the estimates and x_0, s.
func (a *DAdaptSGD[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](dadaptMagic)
	c := a.cfg
	for _, f := range []float64{c.Momentum, c.WeightDecay, c.D0, c.GrowthRate, a.lr} {
		e.f64(f)
	}
	e.u64(boolU64(a.init))
	e.u64(a.t)
	for _, f := range []float64{a.g0, a.dk, a.r, a.dhat, a.step} {
		e.f64(f)
	}
	e.u64(uint64(a.n))
	encVec(e, a.x0)
	encVec(e, a.s)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero DAdaptSGD; on error a is unchanged.
func (a *DAdaptSGD[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, dadaptMagic, "DAdaptSGD")
	var c DAdaptSGDConfig
	c.Momentum, c.WeightDecay, c.D0, c.GrowthRate = d.f64(), d.f64(), d.f64(), d.f64()
	lr := d.f64()
	init := d.flag("started")
	t := d.u64()
	g0, dk, r := d.scalar("g0", true), d.scalar("d", true), d.scalar("r", false)
	dhat, step := d.scalar("d_hat", false), d.scalar("step", true)
	n := d.size()
	if d.err == nil {
		if err := c.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		} else if checkLR(lr) != nil {
			d.fail("DAdaptSGD snapshot lr = %v: must be finite and > 0", lr)
		} else if !(dk > 0) || init && !(g0 > 0) {
			d.fail("DAdaptSGD snapshot d = %v, g0 = %v: must be > 0", dk, g0)
		}
	}
	x0, s := decVec[T](d, n), decVec[T](d, n)
	if err := d.done(); err != nil {
		return err
	}
	*a = DAdaptSGD[T]{cfg: c, n: n, lr: lr, init: init, t: t, g0: g0, dk: dk, r: r, dhat: dhat, step: step,
		x0: orEmpty(x0, n), s: orEmpty(s, n)}
	return nil
}
