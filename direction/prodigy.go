package direction

import (
	"fmt"
	"math"
	"strings"
)

// ProdigyConfig configures [Prodigy] (Mishchenko & Defazio 2024, "Prodigy:
// An Expeditiously Adaptive Parameter-Free Learner", Adam version).
type ProdigyConfig struct {
	Beta1 float64 // β1 ∈ [0, 1)
	Beta2 float64 // β2 ∈ [0, 1)
	// Beta3 ∈ [0, 1) decays r and s; 0 means √β2 (the reference's None).
	Beta3       float64
	Eps         float64 // ε > 0, scaled by d in the denominator
	WeightDecay float64 // ≥ 0
	// Decoupled: AdamW-style decay, x ← x − α_k·d·b·λx with d Prodigy's
	// estimate of D and b the bias-correction factor (1 without
	// BiasCorrection), as the reference's default decouple=True does; false
	// adds λx to g in place (L2).
	Decoupled bool
	// BiasCorrection multiplies the step by √(1−β2^t)/(1−β1^t)
	// (use_bias_correction; off by default).
	BiasCorrection bool
	// SafeguardWarmup leaves α_k out of s (safeguard_warmup; off by default).
	SafeguardWarmup bool
	D0              float64 // d_0 > 0, the initial estimate of D (1e-6)
	DCoef           float64 // > 0, multiplies the estimate d̂ (d_coef, 1)
	GrowthRate      float64 // ≥ 1: d_{k+1} ≤ GrowthRate·d_k; +Inf for no limit
}

// DefaultProdigy returns the reference's defaults (prodigyopt's Prodigy):
// lr 1 (the scheduler's rate: run it under a constant schedule at 1, or the
// cosine schedule its README suggests), β1 = 0.9, β2 = 0.999, β3 = √β2,
// ε = 1e-8, weight decay 0 (decoupled when set), bias correction off,
// safeguard warmup off, d_0 = 1e-6, d_coef = 1, growth rate +Inf.
func DefaultProdigy() ProdigyConfig {
	return ProdigyConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decoupled: true, D0: 1e-6, DCoef: 1,
		GrowthRate: math.Inf(1)}
}

// beta3 returns β3, √β2 when Beta3 is 0.
func (c ProdigyConfig) beta3() float64 {
	if c.Beta3 == 0 {
		return math.Sqrt(c.Beta2)
	}
	return c.Beta3
}

// Validate returns an error naming the first invalid field.
func (c ProdigyConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Beta1", c.Beta1}, {"Beta2", c.Beta2}, {"Beta3", c.Beta3}} {
		if err := checkRange("ProdigyConfig."+f.name, f.v, 0, 1, false, "[0, 1)"); err != nil {
			return err
		}
	}
	if err := checkPosFinite("ProdigyConfig.Eps", c.Eps); err != nil {
		return err
	}
	if err := checkRange("ProdigyConfig.WeightDecay", c.WeightDecay, 0, math.Inf(1), false, "[0, +Inf)"); err != nil {
		return err
	}
	if err := checkPosFinite("ProdigyConfig.D0", c.D0); err != nil {
		return err
	}
	if err := checkPosFinite("ProdigyConfig.DCoef", c.DCoef); err != nil {
		return err
	}
	return checkGrowth("ProdigyConfig.GrowthRate", c.GrowthRate)
}

// Prodigy is the Adam form of Prodigy, whose step size d_k estimates the
// distance D = ‖x_0 − x*‖. With α_k the scheduler's rate (its "lr", 1 by
// default), β3 = √β2, d̂ scaled by d_coef, and λ_k = α_k d_k (times the
// bias correction when on), step k does
//
//	m_{k+1} = β1 m_k + (1−β1) d_k g_k
//	v_{k+1} = β2 v_k + (1−β2) d_k² g_k²
//	r_{k+1} = β3 r_k + (d_k/d_0) λ_k ⟨g_k, x_0 − x_k⟩
//	s_{k+1} = β3 s_k + (d_k/d_0) λ_k g_k          (d_k instead of λ_k with SafeguardWarmup)
//	d̂_{k+1} = r_{k+1}/‖s_{k+1}‖_1
//	d_{k+1} = min(max(d_k, d̂_{k+1}) [max over all d̂], GrowthRate·d_k)
//	x_{k+1} = x_k − λ_k m_{k+1}/(√v_{k+1} + d_{k+1} ε)
//
// The paper writes r and s with a factor (1−β3) on the new terms, and
// without d_k/d_0; both cancel in d̂ = r/‖s‖_1, and the reference
// (prodigy_reference.py) leaves them out as here, including the rule that
// d may first jump to d̂ while it still equals d_0 and the ε term that uses
// the new estimate d_{k+1}.
//
// # Mapping onto direction + step size
//
// Prodigy's step size λ_k = α_k d_k is intrinsic; the scheduler supplies
// only the multiplier α_k (via [LRAware]: SetLR before Compute), which the
// method also folds into r and s. Compute writes d = d_k m/(√v + d_{k+1}ε)
// (plus d_k λx in decoupled mode), so that [Update](x, d, α_k) is Prodigy's
// step; [Prodigy.D] is the estimate and EffectiveLR the step λ_k.
type Prodigy[T Float] struct {
	cfg   ProdigyConfig
	n     int
	lr    float64
	init  bool // x0 holds the first parameters
	t     uint64
	dk    float64 // d_k
	dmax  float64 // max of d_0 and every d̂
	r     float64 // r_k (d_numerator)
	dhat  float64
	step  float64 // λ_k of the last step
	x0    []T
	s     []T
	m, v  []T
	s1sum float64 // ‖s‖_1 of the last step
}

var _ LRAware[float64] = (*Prodigy[float64])(nil)

// NewProdigy returns a Prodigy direction for n parameters.
func NewProdigy[T Float](cfg ProdigyConfig, n int) (*Prodigy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	p := &Prodigy[T]{cfg: cfg, n: n, lr: 1, x0: make([]T, n), s: make([]T, n), m: make([]T, n), v: make([]T, n)}
	p.Reset()
	return p, nil
}

// Config returns the configuration.
func (p *Prodigy[T]) Config() ProdigyConfig { return p.cfg }

// Len returns the number of parameters n.
func (p *Prodigy[T]) Len() int { return p.n }

// Steps returns the number of steps taken since creation or Reset.
func (p *Prodigy[T]) Steps() uint64 { return p.t }

// D returns the current estimate d_k of the distance to the solution.
func (p *Prodigy[T]) D() float64 { return p.dk }

// DHat returns the last raw estimate d̂ (d_0 before the first step).
func (p *Prodigy[T]) DHat() float64 { return p.dhat }

// SetLR sets α_k for the next Compute.
func (p *Prodigy[T]) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	p.lr = lr
	return nil
}

// LR returns the rate the next Compute uses.
func (p *Prodigy[T]) LR() float64 { return p.lr }

// EffectiveLR returns λ_k = α_k d_k (times the bias correction) of the last step.
func (p *Prodigy[T]) EffectiveLR() float64 { return p.step }

// Reset makes the direction fresh: d = d_0, zero buffers, and x_0 taken
// again at the next Compute. The rate set by SetLR is kept.
func (p *Prodigy[T]) Reset() {
	clear(p.x0)
	clear(p.s)
	clear(p.m)
	clear(p.v)
	p.init, p.t, p.r, p.step, p.s1sum = false, 0, 0, 0, 0
	p.dk, p.dmax, p.dhat = p.cfg.D0, p.cfg.D0, p.cfg.D0
}

// Compute writes d_k into d; see [Prodigy] and [Direction.Compute]. While
// every gradient so far is zero (‖s‖_1 = 0) it writes d = 0 and leaves d_k
// and the step count as they are, as the reference returns early.
func (p *Prodigy[T]) Compute(d, g, x []T) error {
	if err := checkArgs(p.n, d, g, x); err != nil {
		return err
	}
	n := p.n
	d, g, x = d[:n], g[:n], x[:n]
	s, m, v := p.s[:n], p.m[:n], p.v[:n]
	k := p.coefs()
	r, dhat, s1, err := p.next(g, x, k)
	if err != nil {
		return err
	}
	if !p.init {
		copy(p.x0[:n], x)
		p.init = true
	}
	c := p.cfg
	bc, dk, dlr, l2, wd := k.bc, k.dk, k.dlr, k.l2, k.wd
	b1, cb1, b2, cb2, tb3, tsw := k.b1, k.cb1, k.b2, k.cb2, k.tb3, k.tsw
	for i := range g {
		gi := g[i]
		if l2 {
			gi += T(wd * x[i])
			g[i] = gi
		}
		m[i] = T(b1*m[i]) + T(cb1*gi)
		v[i] = T(b2*v[i]) + T(cb2*T(gi*gi))
		s[i] = T(tb3*s[i]) + T(tsw*gi)
	}
	if s1 == 0 {
		clear(d)
		return nil
	}
	p.r = r
	dn := dk
	if dk == c.D0 {
		dn = math.Max(dk, dhat)
	}
	p.dmax = math.Max(p.dmax, dhat)
	dn = math.Min(p.dmax, dn*c.GrowthRate)
	p.dk, p.dhat, p.s1sum, p.step = dn, dhat, s1, dlr
	p.t++
	scale := T(dk * bc)
	deps := T(dn * c.Eps)
	dec := c.WeightDecay != 0 && c.Decoupled
	for i := range d {
		di := T(scale*m[i]) / (T(math.Sqrt(float64(v[i]))) + deps)
		if dec {
			di += T(T(scale*wd) * x[i])
		}
		d[i] = di
	}
	return nil
}

// prodigyCoefs are the coefficients of a step of Prodigy, which Compute and
// next share.
type prodigyCoefs[T Float] struct {
	b3, bc, dk, dlr float64 // β3, the bias correction, d_k and d_k·α·bc
	l2              bool
	wd, b1, cb1     T
	b2, cb2         T
	tb3, tsw        T // β3 and s's weight of g
}

func (p *Prodigy[T]) coefs() prodigyCoefs[T] {
	c := p.cfg
	b3 := c.beta3()
	bc := 1.0
	if c.BiasCorrection {
		tf := float64(p.t + 1)
		bc = math.Sqrt(1-math.Pow(c.Beta2, tf)) / (1 - math.Pow(c.Beta1, tf))
	}
	dk := p.dk
	dlr := dk * p.lr * bc
	sw := (dk / c.D0) * dlr
	if c.SafeguardWarmup {
		sw = (dk / c.D0) * dk
	}
	return prodigyCoefs[T]{b3: b3, bc: bc, dk: dk, dlr: dlr, l2: c.WeightDecay != 0 && !c.Decoupled,
		wd: T(c.WeightDecay), b1: T(c.Beta1), cb1: T(dk * (1 - c.Beta1)), b2: T(c.Beta2), cb2: T(dk * dk * (1 - c.Beta2)),
		tb3: T(b3), tsw: T(sw)}
}

// next returns the step's r, d̂ and ‖s‖₁ with the new s, computed with the
// coefficients k from g with its weight decay and without writing anything,
// or an error if a buffer or an estimate would not be finite. With ‖s‖₁ = 0
// it returns r = d̂ = 0, which Compute does not use.
func (p *Prodigy[T]) next(g, x []T, k prodigyCoefs[T]) (r, dhat, s1 float64, err error) {
	n := p.n
	x0, s, m, v := p.x0[:n], p.s[:n], p.m[:n], p.v[:n]
	if !p.init {
		x0 = x
	}
	c := p.cfg
	var ip float64
	for i := range g {
		gi := g[i]
		if k.l2 {
			gi += T(k.wd * x[i])
		}
		ip += float64(float64(gi) * float64(x0[i]-x[i]))
		mi := T(k.b1*m[i]) + T(k.cb1*gi)
		vi := T(k.b2*v[i]) + T(k.cb2*T(gi*gi))
		si := T(k.tb3*s[i]) + T(k.tsw*gi)
		s1 += math.Abs(float64(si))
		if !finite(float64(mi)) || !finite(float64(vi)) || !finite(float64(si)) {
			return 0, 0, 0, overflow(fmt.Sprintf("Prodigy's m[%d], v[%d] or s[%d]", i, i, i), float64(mi+vi+si))
		}
	}
	if !finite(s1) {
		return 0, 0, 0, overflow("Prodigy's ‖s‖₁", s1)
	}
	if s1 == 0 {
		return 0, 0, 0, nil
	}
	r = p.r*k.b3 + (k.dk/c.D0)*k.dlr*ip
	dhat = c.DCoef * r / s1
	if !finite(r) || !finite(dhat) {
		return 0, 0, 0, overflow("Prodigy's estimate of D", dhat)
	}
	return r, dhat, s1, nil
}

const prodigyMagic = "DPRD"

// MarshalBinary writes a versioned snapshot of the configuration, the rate,
// the estimates and the buffers x_0, s, m, v.
func (p *Prodigy[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](prodigyMagic)
	c := p.cfg
	for _, f := range []float64{c.Beta1, c.Beta2, c.Beta3, c.Eps, c.WeightDecay, c.D0, c.DCoef, c.GrowthRate} {
		e.f64(f)
	}
	e.u64(boolU64(c.Decoupled))
	e.u64(boolU64(c.BiasCorrection))
	e.u64(boolU64(c.SafeguardWarmup))
	e.f64(p.lr)
	e.u64(boolU64(p.init))
	e.u64(p.t)
	for _, f := range []float64{p.dk, p.dmax, p.r, p.dhat, p.step, p.s1sum} {
		e.f64(f)
	}
	e.u64(uint64(p.n))
	encVec(e, p.x0)
	encVec(e, p.s)
	encVec(e, p.m)
	encVec(e, p.v)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero Prodigy; on error p is unchanged.
func (p *Prodigy[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, prodigyMagic, "Prodigy")
	var c ProdigyConfig
	c.Beta1, c.Beta2, c.Beta3, c.Eps, c.WeightDecay, c.D0, c.DCoef, c.GrowthRate =
		d.f64(), d.f64(), d.f64(), d.f64(), d.f64(), d.f64(), d.f64(), d.f64()
	c.Decoupled, c.BiasCorrection, c.SafeguardWarmup = d.flag("Decoupled"), d.flag("BiasCorrection"), d.flag("SafeguardWarmup")
	lr := d.f64()
	init := d.flag("started")
	t := d.u64()
	dk, dmax, r := d.scalar("d", true), d.scalar("d_max", true), d.scalar("r", false)
	dhat, step, s1 := d.scalar("d_hat", false), d.scalar("step", true), d.scalar("s1", true)
	n := d.size()
	if d.err == nil {
		if err := c.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		} else if checkLR(lr) != nil {
			d.fail("Prodigy snapshot lr = %v: must be finite and > 0", lr)
		} else if !(dk > 0) {
			d.fail("Prodigy snapshot d = %v: must be > 0", dk)
		}
	}
	x0, s, m, v := decVec[T](d, n), decVec[T](d, n), decVec[T](d, n), decVec[T](d, n)
	if err := d.done(); err != nil {
		return err
	}
	*p = Prodigy[T]{cfg: c, n: n, lr: lr, init: init, t: t, dk: dk, dmax: dmax, r: r, dhat: dhat, step: step,
		s1sum: s1, x0: orEmpty(x0, n), s: orEmpty(s, n), m: orEmpty(m, n), v: orEmpty(v, n)}
	return nil
}

// String describes the estimate, for logs.
func (p *Prodigy[T]) String() string {
	return fmt.Sprintf("prodigy(k=%d d=%g d_hat=%g lr=%g)", p.t, p.dk, p.dhat, p.lr)
}
