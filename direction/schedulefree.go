package direction

import (
	"fmt"
	"math"
	"strings"
)

// ScheduleFreeConfig configures [ScheduleFree]: Schedule-Free SGD and
// Schedule-Free AdamW (Defazio, Yang, Mehta, Mishchenko, Khaled & Cutkosky
// 2024, "The Road Less Scheduled", Algorithm 1 and its SGD form).
type ScheduleFreeConfig struct {
	// Adam selects Schedule-Free AdamW; false is Schedule-Free SGD.
	Adam bool
	// Beta1 is β ∈ (0, 1), the interpolation y = (1−β)z + βx (the
	// reference's momentum for SGD, betas[0] for AdamW).
	Beta1 float64
	// Beta2 ∈ [0, 1) and Eps > 0: AdamW's second moment and ε (unused by SGD).
	Beta2 float64
	Eps   float64
	// WeightDecay λ ≥ 0, taken at y. SGD: L2, g ← g + λy in place (as
	// [QHM]). AdamW: decoupled, z ← z − γ_t(g/(√v̂+ε) + λy); g is left as is.
	WeightDecay float64
	// R ≥ 0: the averaging weight of step t is t^R·γ_max^WeightLRPower,
	// γ_max the largest γ so far (the reference's r and weight_lr_power).
	R             float64
	WeightLRPower float64
	// PaperBiasCorrection (AdamW only) puts Adam's bias correction in γ_t
	// as the paper's Algorithm 1 does, γ_t = α_k·√(1−β2^t) and
	// z ← z − γ_t(g/(√v+ε) + λy), so that it also shapes the averaging
	// weights and the decay (the package's AdamWScheduleFreePaper). False
	// is the reference package's form since schedulefree 1.3
	// (AdamWScheduleFree, AdamWScheduleFreeReference): γ_t = α_k and
	// z ← z − γ_t(g/(√(v/(1−β2^t))+ε) + λy).
	PaperBiasCorrection bool
}

// DefaultScheduleFreeSGD returns the reference's SGDScheduleFree defaults:
// β = 0.9, no weight decay, r = 0, weight_lr_power = 2. Its lr is 1.0 and
// its warmup is off by default (warmup_steps = 0), a linear warmup being
// recommended (README): run it under schedule.Warmup (or Constant) at lr 1.
func DefaultScheduleFreeSGD() ScheduleFreeConfig {
	return ScheduleFreeConfig{Beta1: 0.9, WeightLRPower: 2}
}

// DefaultScheduleFreeAdamW returns the reference's AdamWScheduleFree
// defaults: β1 = 0.9, β2 = 0.999, ε = 1e-8, weight decay 0, r = 0,
// weight_lr_power = 2, bias correction in the denominator (schedulefree ≥
// 1.3). Its lr is 0.0025 with warmup off by default (warmup_steps = 0) and
// recommended (README): run it under schedule.Warmup at lr 0.0025.
func DefaultScheduleFreeAdamW() ScheduleFreeConfig {
	return ScheduleFreeConfig{Adam: true, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightLRPower: 2}
}

// Name is "schedule-free-adamw" or "schedule-free-sgd".
func (c ScheduleFreeConfig) Name() string {
	if c.Adam {
		return "schedule-free-adamw"
	}
	return "schedule-free-sgd"
}

// Validate returns an error naming the first invalid field.
func (c ScheduleFreeConfig) Validate() error {
	if !(c.Beta1 > 0 && c.Beta1 < 1) {
		return fmt.Errorf("direction: ScheduleFreeConfig.Beta1 = %v: must be in (0, 1)", c.Beta1)
	}
	if c.Adam {
		if err := checkRange("ScheduleFreeConfig.Beta2", c.Beta2, 0, 1, false, "[0, 1)"); err != nil {
			return err
		}
		if err := checkPosFinite("ScheduleFreeConfig.Eps", c.Eps); err != nil {
			return err
		}
	} else {
		// Schedule-Free SGD reads none of Adam's settings: a value set there
		// would be ignored.
		switch {
		case c.Beta2 != 0:
			return fmt.Errorf("direction: ScheduleFreeConfig.Beta2 = %v: must be 0 without Adam (Schedule-Free SGD does not read it)", c.Beta2)
		case c.Eps != 0:
			return fmt.Errorf("direction: ScheduleFreeConfig.Eps = %v: must be 0 without Adam (Schedule-Free SGD does not read it)", c.Eps)
		case c.PaperBiasCorrection:
			return fmt.Errorf("direction: ScheduleFreeConfig.PaperBiasCorrection = true: must be false without Adam (Schedule-Free SGD does not read it)")
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"WeightDecay", c.WeightDecay}, {"R", c.R}, {"WeightLRPower", c.WeightLRPower}} {
		if err := checkRange("ScheduleFreeConfig."+f.name, f.v, 0, math.Inf(1), false, "[0, +Inf)"); err != nil {
			return err
		}
	}
	return nil
}

// ScheduleFree is Schedule-Free SGD or AdamW. It keeps three sequences:
// z (the base optimizer's iterate), x (the weighted average of z, where the
// model is evaluated) and y = (1−β)z + βx (where gradients are taken):
//
//	y_t = (1−β) z_t + β x_t,             g_t = ∇f(y_t)
//	SGD:   z_{t+1} = z_t − γ_t (g_t + λ y_t)
//	AdamW: v_t = β2 v_{t−1} + (1−β2) g_t²
//	       z_{t+1} = z_t − γ_t (g_t/(√(v_t/(1−β2^t)) + ε) + λ y_t)
//	c_{t+1} = w_t / Σ_{i≤t} w_i,        w_t = t^r · (max_{i≤t} γ_i)^p
//	x_{t+1} = (1 − c_{t+1}) x_t + c_{t+1} z_{t+1}
//
// with x_1 = z_1 = y_1 the parameters at the first Compute, γ_t = α_k the
// scheduler's rate (a linear warmup in the reference; see
// [ScheduleFreeConfig.PaperBiasCorrection] for the paper's γ_t) and p =
// WeightLRPower. With r = 0 and a constant or warming-up γ, c_{t+1} =
// γ_t²/Σγ_i² as in the paper's Algorithm 1 (1/t once γ is constant).
//
// # Mapping onto direction + step size
//
// The caller's parameter vector holds y, the gradient point. Compute(d, g, y)
// advances z and x and writes d = (y − y_{t+1})/α_k, so that
// [Update](y, d, α_k) moves the parameters to y_{t+1}: the method runs under
// any scheduler through [LRAware] (SetLR(α_k) before Compute). The truth is
// z and x, held here: each step re-anchors y_{t+1} to (1−β)z_{t+1} +
// βx_{t+1}, so rounding in Update does not accumulate.
//
// # Evaluation point
//
// Schedule-Free is evaluated at x, not at y: before a validation or test
// pass, copy x into the parameters with [ScheduleFree.Eval] (or read
// [ScheduleFree.X]), and restore y with [ScheduleFree.Train] before the next
// training step (the reference's optimizer.eval() and optimizer.train()).
// Save checkpoints of the model at x. Batch-norm running statistics
// collected during training belong to y: recompute them at x (a few
// training-mode forward passes with the parameters at x) before evaluating,
// as the reference's README says; the engine does that, not this type.
type ScheduleFree[T Float] struct {
	cfg   ScheduleFreeConfig
	n     int
	lr    float64 // α_k for the next Compute
	init  bool    // z and x hold the sequences (set by the first Compute)
	t     uint64  // completed steps
	lrMax float64 // max γ so far (0 before the first step)
	wsum  float64 // Σ w_i
	gamma float64 // γ_t of the last step
	z, x  []T
	v     []T // AdamW only; nil for SGD
}

var _ LRAware[float64] = (*ScheduleFree[float64])(nil)

// NewScheduleFree returns a Schedule-Free direction for n parameters.
func NewScheduleFree[T Float](cfg ScheduleFreeConfig, n int) (*ScheduleFree[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	s := &ScheduleFree[T]{cfg: cfg, n: n, lr: 1, z: make([]T, n), x: make([]T, n)}
	if cfg.Adam {
		s.v = make([]T, n)
	}
	return s, nil
}

// Config returns the configuration.
func (s *ScheduleFree[T]) Config() ScheduleFreeConfig { return s.cfg }

// Len returns the number of parameters n.
func (s *ScheduleFree[T]) Len() int { return s.n }

// Steps returns t, the number of Compute calls since creation or Reset.
func (s *ScheduleFree[T]) Steps() uint64 { return s.t }

// SetLR sets α_k for the next Compute.
func (s *ScheduleFree[T]) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	s.lr = lr
	return nil
}

// LR returns the rate the next Compute uses.
func (s *ScheduleFree[T]) LR() float64 { return s.lr }

// EffectiveLR returns γ_t of the last step.
func (s *ScheduleFree[T]) EffectiveLR() float64 { return s.gamma }

// Started reports whether a Compute has set z and x (before it, x = y = the
// parameters, whatever they are).
func (s *ScheduleFree[T]) Started() bool { return s.init }

// X returns the evaluation sequence x_t, the weighted average of z. It is a
// view: do not modify. Before the first Compute it is all zeros and
// meaningless (see Started).
func (s *ScheduleFree[T]) X() []T { return s.x }

// Z returns the base sequence z_t. It is a view: do not modify.
func (s *ScheduleFree[T]) Z() []T { return s.z }

// SecondMoment returns AdamW's v_t (nil for SGD). It is a view.
func (s *ScheduleFree[T]) SecondMoment() []T { return s.v }

// Eval writes the evaluation point x into p (the reference's
// optimizer.eval()). Before the first Compute it leaves p as it is, since
// then x = y = p. Recompute batch-norm statistics at x before evaluating.
func (s *ScheduleFree[T]) Eval(p []T) error {
	if len(p) != s.n {
		return fmt.Errorf("direction: ScheduleFree.Eval: len(p) = %d: must equal n = %d", len(p), s.n)
	}
	if s.init {
		copy(p, s.x)
	}
	return nil
}

// Train writes the gradient point y = (1−β)z + βx into p (the reference's
// optimizer.train()), undoing [ScheduleFree.Eval]. Before the first Compute
// it leaves p as it is.
func (s *ScheduleFree[T]) Train(p []T) error {
	if len(p) != s.n {
		return fmt.Errorf("direction: ScheduleFree.Train: len(p) = %d: must equal n = %d", len(p), s.n)
	}
	if !s.init {
		return nil
	}
	b, cb := T(s.cfg.Beta1), T(1-s.cfg.Beta1)
	for i := range p {
		p[i] = T(cb*s.z[i]) + T(b*s.x[i])
	}
	return nil
}

// Reset makes the direction fresh: the next Compute restarts the sequences
// from the parameters it is given. The rate set by SetLR is kept.
func (s *ScheduleFree[T]) Reset() {
	clear(s.z)
	clear(s.x)
	clear(s.v)
	s.init, s.t, s.lrMax, s.wsum, s.gamma = false, 0, 0, 0, 0
}

// Compute advances z and x with the gradient g taken at y and writes
// d = (y − y_{t+1})/α_k; see [ScheduleFree] and [Direction.Compute].
func (s *ScheduleFree[T]) Compute(d, g, y []T) error {
	if err := checkArgs(s.n, d, g, y); err != nil {
		return err
	}
	n := s.n
	d, g, y = d[:n], g[:n], y[:n]
	z, x := s.z[:n], s.x[:n]
	c := s.cfg
	tf := float64(s.t + 1) // t after this step
	gamma := s.lr
	bc2 := 1.0
	if c.Adam {
		bc2 = 1 - math.Pow(c.Beta2, tf)
		if c.PaperBiasCorrection {
			gamma *= math.Sqrt(bc2)
		}
	}
	lrMax := math.Max(s.lrMax, gamma)
	w := math.Pow(tf, c.R) * math.Pow(lrMax, c.WeightLRPower)
	wsum := s.wsum + w
	if !finite(wsum) {
		return overflow("ScheduleFree's averaging weight sum", wsum)
	}
	ck := 0.0
	if wsum > 0 {
		ck = w / wsum
	}
	gm, wd := T(gamma), T(c.WeightDecay)
	useWD := c.WeightDecay != 0
	b, cb := T(c.Beta1), T(1-c.Beta1)
	ct, cct := T(ck), T(1-ck)
	b2, cb2 := T(c.Beta2), T(1-c.Beta2)
	eps := T(c.Eps)
	sbc := T(1)
	if c.Adam && !c.PaperBiasCorrection {
		sbc = T(math.Sqrt(bc2))
	}
	// The new z, x (and v), checked before anything is written.
	zOld, xOld := z, x
	if !s.init {
		zOld, xOld = y, y
	}
	for i := range g {
		gi, u := g[i], g[i]
		if c.Adam {
			vi := T(b2*s.v[i]) + T(cb2*T(gi*gi))
			if !finite(float64(vi)) {
				return overflow(fmt.Sprintf("ScheduleFree's v[%d]", i), float64(vi))
			}
			u = gi / (T(math.Sqrt(float64(vi)))/sbc + eps)
		}
		if useWD {
			u += T(wd * y[i])
		}
		zi := zOld[i] - T(gm*u)
		if xi := T(cct*xOld[i]) + T(ct*zi); !finite(float64(zi)) || !finite(float64(xi)) {
			return overflow(fmt.Sprintf("ScheduleFree's z[%d] or x[%d]", i, i), float64(zi+xi))
		}
	}
	if !s.init {
		copy(z, y)
		copy(x, y)
		s.init = true
	}
	s.t++
	s.gamma, s.lrMax, s.wsum = gamma, lrMax, wsum
	inv := 1 / s.lr
	if !c.Adam {
		for i := range g {
			gi := g[i]
			if useWD {
				gi += T(wd * y[i])
				g[i] = gi
			}
			zi := z[i] - T(gm*gi)
			xi := T(cct*x[i]) + T(ct*zi)
			z[i], x[i] = zi, xi
			d[i] = T(float64(y[i]-(T(cb*zi)+T(b*xi))) * inv)
		}
		return nil
	}
	v := s.v[:n]
	for i := range g {
		gi := g[i]
		vi := T(b2*v[i]) + T(cb2*T(gi*gi))
		v[i] = vi
		u := gi / (T(math.Sqrt(float64(vi)))/sbc + eps)
		if useWD {
			u += T(wd * y[i])
		}
		zi := z[i] - T(gm*u)
		xi := T(cct*x[i]) + T(ct*zi)
		z[i], x[i] = zi, xi
		d[i] = T(float64(y[i]-(T(cb*zi)+T(b*xi))) * inv)
	}
	return nil
}

const sfMagic = "DSCF"

// MarshalBinary writes a versioned snapshot of the configuration, the rate,
// the step count, the averaging sums and z, x (and v).
func (s *ScheduleFree[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](sfMagic)
	c := s.cfg
	e.u64(boolU64(c.Adam))
	e.f64(c.Beta1)
	e.f64(c.Beta2)
	e.f64(c.Eps)
	e.f64(c.WeightDecay)
	e.f64(c.R)
	e.f64(c.WeightLRPower)
	e.u64(boolU64(c.PaperBiasCorrection))
	e.f64(s.lr)
	e.u64(boolU64(s.init))
	e.u64(s.t)
	e.f64(s.lrMax)
	e.f64(s.wsum)
	e.f64(s.gamma)
	e.u64(uint64(s.n))
	encVec(e, s.z)
	encVec(e, s.x)
	encVec(e, s.v)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero ScheduleFree; on error s is unchanged.
func (s *ScheduleFree[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, sfMagic, "ScheduleFree")
	var c ScheduleFreeConfig
	c.Adam = d.flag("Adam")
	c.Beta1, c.Beta2, c.Eps, c.WeightDecay, c.R, c.WeightLRPower = d.f64(), d.f64(), d.f64(), d.f64(), d.f64(), d.f64()
	c.PaperBiasCorrection = d.flag("PaperBiasCorrection")
	lr := d.f64()
	init := d.flag("started")
	t := d.u64()
	lrMax, wsum, gamma := d.scalar("lr_max", true), d.scalar("weight_sum", true), d.scalar("gamma", true)
	n := d.size()
	if d.err == nil {
		if err := c.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		} else if err := checkLR(lr); err != nil {
			d.fail("ScheduleFree snapshot lr = %v: must be finite and > 0", lr)
		}
	}
	z := decVec[T](d, n)
	x := decVec[T](d, n)
	var v []T
	if c.Adam {
		v = decVec[T](d, n)
	} else {
		decVec[T](d, 0)
	}
	if err := d.done(); err != nil {
		return err
	}
	if c.Adam {
		v = orEmpty(v, n)
	}
	*s = ScheduleFree[T]{cfg: c, n: n, lr: lr, init: init, t: t, lrMax: lrMax, wsum: wsum, gamma: gamma,
		z: orEmpty(z, n), x: orEmpty(x, n), v: v}
	return nil
}
