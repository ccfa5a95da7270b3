package schedule

import (
	"fmt"
	"math"
)

// CosineConfig is cosine decay with a linear warmup, a schedule that needs
// the budget: α_k = LR·k/W for k ≤ W, then
//
//	α_k = MinLR + (LR − MinLR)·(1 + cos(π (k−W−1)/(T−W)))/2,   W < k ≤ T
//
// which for W = 0 is PyTorch's CosineAnnealingLR(T_max = T, eta_min = MinLR)
// stepped once per batch (its closed form at t = k−1). Steps past the budget
// (k > T, a run extended beyond it) keep the last rate α_T.
type CosineConfig struct {
	LR          float64 // peak rate > 0
	Steps       int     // T ≥ 1: the budget, total optimizer steps
	WarmupSteps int     // W ∈ [0, T): linear warmup length
	MinLR       float64 // ∈ [0, LR): the rate the decay ends at (eta_min)
}

// WSDConfig is warmup–stable–decay: a linear warmup over W steps, the peak
// rate, then a linear decay over the last D = max(1, round(DecayFraction·T))
// steps of the budget T:
//
//	α_k = LR·k/W                              k ≤ W
//	α_k = LR                                  W < k ≤ T−D
//	α_k = MinLR + (LR − MinLR)·(1 − (k−(T−D)−1)/D)   T−D < k ≤ T
//
// so the rate falls by (LR−MinLR)/D a step and would reach MinLR (zero by
// default) at step T+1; steps past the budget keep the last rate α_T, which
// is positive.
type WSDConfig struct {
	LR            float64 // peak rate > 0
	Steps         int     // T ≥ 1: the budget
	WarmupSteps   int     // W ≥ 0, W ≤ T − D
	DecayFraction float64 // ∈ (0, 1]: the decay's share of the budget (0.2)
	MinLR         float64 // ∈ [0, LR): the rate the decay heads to (0)
}

// Validate reports the first invalid field.
func (c CosineConfig) Validate() error {
	if err := firstErr(checkPos("CosineConfig.LR", c.LR), checkIntMin("CosineConfig.Steps", c.Steps, 1),
		checkIntMin("CosineConfig.WarmupSteps", c.WarmupSteps, 0)); err != nil {
		return err
	}
	if c.WarmupSteps >= c.Steps {
		return &FieldError{"CosineConfig.WarmupSteps", c.WarmupSteps, fmt.Sprintf("must be < the budget's %d steps", c.Steps)}
	}
	return checkMinLR("CosineConfig.MinLR", c.MinLR, c.LR)
}

func checkMinLR(field string, v, lr float64) error {
	if !(v >= 0 && v < lr) {
		return &FieldError{field, v, fmt.Sprintf("must be ≥ 0 and < the peak rate, %v", lr)}
	}
	return nil
}

// decaySteps is D.
func (c WSDConfig) decaySteps() int { return decayLen(c.DecayFraction, c.Steps) }

// decayLen is the length of a decay over the share fraction of a budget of
// steps steps, at least one step: max(1, round(fraction·steps)).
func decayLen(fraction float64, steps int) int {
	return max(1, int(math.Round(fraction*float64(steps))))
}

// Validate reports the first invalid field.
func (c WSDConfig) Validate() error {
	if err := firstErr(checkPos("WSDConfig.LR", c.LR), checkIntMin("WSDConfig.Steps", c.Steps, 1),
		checkIntMin("WSDConfig.WarmupSteps", c.WarmupSteps, 0), checkTheta("WSDConfig.DecayFraction", c.DecayFraction),
		checkMinLR("WSDConfig.MinLR", c.MinLR, c.LR)); err != nil {
		return err
	}
	if c.WarmupSteps > c.Steps-c.decaySteps() {
		return &FieldError{"WSDConfig.WarmupSteps", c.WarmupSteps, fmt.Sprintf("must leave the decay its share of the budget: ≤ %d steps (the budget's %d − the decay's %d)",
			c.Steps-c.decaySteps(), c.Steps, c.decaySteps())}
	}
	return nil
}

// budgetState is the state of a budgeted schedule: the step count only.
type budgetState struct {
	Step int
}

// budgeted is what Cosine and WSD share: a rate that is a function of the
// step, no statistics and no drops.
type budgeted struct {
	name string
	opt  options
	st   stepper
	at   func(k int) float64 // α_k for k ≥ 1
}

func (b *budgeted) Name() string                   { return b.name }
func (b *budgeted) Step() int                      { return b.st.k }
func (b *budgeted) Searching() bool                { return false }
func (b *budgeted) Abort()                         { b.st.abort() }
func (b *budgeted) setOptions(o options)           { b.opt = o }
func (b *budgeted) Trial(float64) (Request, error) { return Request{}, noTrial(b.st.k + 1) }

// LR is the rate of the next step.
func (b *budgeted) LR() float64 { return b.at(b.st.k + 1) }

// Begin opens a step.
func (b *budgeted) Begin(loss, gd float64) (Request, error) {
	if err := b.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: b.LR()}, nil
}

// End closes the step.
func (b *budgeted) End(obs Observation) (Result, error) {
	lr := b.LR()
	if _, err := b.st.checkEnd(obs, lr); err != nil {
		return Result{}, err
	}
	k := b.st.commit()
	return Result{Step: k, LR: lr, NextLR: b.LR()}, nil
}

func (b *budgeted) marshal(cfg any) ([]byte, error) {
	if err := b.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(b.name, cfg, budgetState{Step: b.st.k})
}

func (b *budgeted) setStep(k int) error {
	if err := checkIntMin("State.Step", k, 0); err != nil {
		return err
	}
	b.st = stepper{k: k}
	return nil
}

// warm is the linear warmup α·k/W.
func warm(lr float64, k, w int) float64 { return lr * float64(k) / float64(w) }

// Cosine is cosine decay with linear warmup over a known budget.
type Cosine struct {
	budgeted
	cfg CosineConfig
}

// NewCosine returns a cosine schedule.
func NewCosine(cfg CosineConfig, opts ...Option) (*Cosine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cosine{cfg: cfg}
	c.budgeted = budgeted{name: "cosine", opt: buildOptions(opts), at: cfg.lrAt}
	return c, nil
}

// lrAt is α_k, 1-based.
func (c CosineConfig) lrAt(k int) float64 {
	k = min(k, c.Steps)
	if k <= c.WarmupSteps {
		return warm(c.LR, k, c.WarmupSteps)
	}
	t := float64(k - c.WarmupSteps - 1)
	return c.MinLR + (c.LR-c.MinLR)*(1+math.Cos(math.Pi*t/float64(c.Steps-c.WarmupSteps)))/2
}

// Config returns the configuration.
func (c *Cosine) Config() CosineConfig { return c.cfg }

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (c *Cosine) MarshalBinary() ([]byte, error) { return c.marshal(c.cfg) }

// UnmarshalBinary restores a snapshot into any Cosine value.
func (c *Cosine) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "cosine", NewCosine, func(n *Cosine, st budgetState) error { return n.setStep(st.Step) })
	if err != nil {
		return err
	}
	n.opt = c.opt
	*c = *n
	return nil
}

// WSD is warmup–stable–decay over a known budget.
type WSD struct {
	budgeted
	cfg WSDConfig
}

// NewWSD returns a warmup–stable–decay schedule.
func NewWSD(cfg WSDConfig, opts ...Option) (*WSD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &WSD{cfg: cfg}
	w.budgeted = budgeted{name: "wsd", opt: buildOptions(opts), at: cfg.lrAt}
	return w, nil
}

// lrAt is α_k, 1-based.
func (c WSDConfig) lrAt(k int) float64 {
	k = min(k, c.Steps)
	d := c.decaySteps()
	stable := c.Steps - d
	switch {
	case k <= c.WarmupSteps:
		return warm(c.LR, k, c.WarmupSteps)
	case k <= stable:
		return c.LR
	}
	t := float64(k - stable - 1)
	return c.MinLR + (c.LR-c.MinLR)*(1-t/float64(d))
}

// Config returns the configuration.
func (w *WSD) Config() WSDConfig { return w.cfg }

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (w *WSD) MarshalBinary() ([]byte, error) { return w.marshal(w.cfg) }

// UnmarshalBinary restores a snapshot into any WSD value.
func (w *WSD) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "wsd", NewWSD, func(n *WSD, st budgetState) error { return n.setStep(st.Step) })
	if err != nil {
		return err
	}
	n.opt = w.opt
	*w = *n
	return nil
}
