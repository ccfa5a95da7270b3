package schedule

import (
	"fmt"
	"math"
)

// PlateauConfig is PyTorch's ReduceLROnPlateau in mode "min" on the
// validation loss: a constant rate, multiplied by Factor when the loss has
// not improved for more than Patience checks.
type PlateauConfig struct {
	LR        float64 // initial rate > 0
	Factor    float64 // ∈ (0, 1): α ← max(Factor·α, MinLR) on a reduction (0.1)
	Patience  int     // ≥ 0: checks without improvement tolerated (10)
	Threshold float64 // ≥ 0: improvement needed (1e-4)
	// ThresholdAbs selects PyTorch's threshold_mode 'abs' (loss < best −
	// Threshold); false is 'rel' (loss < best·(1 − Threshold)), the default.
	ThresholdAbs bool
	Cooldown     int     // ≥ 0: checks after a reduction during which bad checks are not counted (0)
	MinLR        float64 // ≥ 0: the floor of the rate (0)
	Eps          float64 // ≥ 0: a reduction smaller than this is skipped (1e-8)
}

// DefaultPlateau returns PyTorch's defaults: mode min, factor 0.1,
// patience 10, threshold 1e-4 (rel), cooldown 0, min_lr 0, eps 1e-8.
func DefaultPlateau(lr float64) PlateauConfig {
	return PlateauConfig{LR: lr, Factor: 0.1, Patience: 10, Threshold: 1e-4, Eps: 1e-8}
}

// Validate reports the first invalid field.
func (c PlateauConfig) Validate() error {
	return firstErr(checkPos("PlateauConfig.LR", c.LR), checkOpen01("PlateauConfig.Factor", c.Factor),
		checkIntMin("PlateauConfig.Patience", c.Patience, 0), checkIntMin("PlateauConfig.Cooldown", c.Cooldown, 0),
		checkNonNeg("PlateauConfig.Threshold", c.Threshold), checkNonNeg("PlateauConfig.MinLR", c.MinLR), checkNonNeg("PlateauConfig.Eps", c.Eps))
}

// PlateauState is the state between steps.
type PlateauState struct {
	Step     int
	LR       float64
	Best     *float64 // nil before the first check (JSON has no +Inf)
	Bad      int      // num_bad_epochs
	Cooldown int      // cooldown_counter
	Checks   int
}

// Plateau is ReduceLROnPlateau: a constant rate between validations, and
// at each [Plateau.Validate] PyTorch's step(metrics):
//
//	if better(loss, best) { best = loss; bad = 0 } else { bad++ }
//	if cooldown > 0 { cooldown--; bad = 0 }
//	if bad > patience { α' = max(Factor·α, MinLR); if α − α' > Eps { α = α' }; cooldown = Cooldown; bad = 0 }
//
// with better(a, best) = a < best·(1 − Threshold) ('rel') or a < best −
// Threshold ('abs'), and best = +Inf at first. A reduction keeps the
// momentum, as PyTorch does, and is reported as a drop with reason
// "validation" (none when the floor stops it).
type Plateau struct {
	cfg      PlateauConfig
	opt      options
	st       stepper
	lr       float64
	best     float64
	bad      int
	cooldown int
	checks   int
}

// NewPlateau returns a ReduceLROnPlateau schedule.
func NewPlateau(cfg PlateauConfig, opts ...Option) (*Plateau, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Plateau{cfg: cfg, opt: buildOptions(opts), lr: cfg.LR, best: math.Inf(1)}, nil
}

func (p *Plateau) Name() string                   { return "plateau" }
func (p *Plateau) LR() float64                    { return p.lr }
func (p *Plateau) Step() int                      { return p.st.k }
func (p *Plateau) Searching() bool                { return false }
func (p *Plateau) Abort()                         { p.st.abort() }
func (p *Plateau) setOptions(o options)           { p.opt = o }
func (p *Plateau) Trial(float64) (Request, error) { return Request{}, noTrial(p.st.k + 1) }

// Config returns the configuration.
func (p *Plateau) Config() PlateauConfig { return p.cfg }

// Begin opens a step.
func (p *Plateau) Begin(loss, gd float64) (Request, error) {
	if err := p.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: p.lr}, nil
}

// End closes the step.
func (p *Plateau) End(obs Observation) (Result, error) {
	if _, err := p.st.checkEnd(obs, p.lr); err != nil {
		return Result{}, err
	}
	k := p.st.commit()
	return Result{Step: k, LR: p.lr, NextLR: p.lr}, nil
}

func (p *Plateau) better(a float64) bool {
	if p.cfg.ThresholdAbs {
		return a < p.best-p.cfg.Threshold
	}
	return a < p.best*(1-p.cfg.Threshold)
}

// Validate reports a validation loss between steps (typically once an
// epoch) and reduces the rate as ReduceLROnPlateau.step(loss) does. The
// result carries a KindValidation event and, on a reduction, a KindDrop.
func (p *Plateau) Validate(loss float64) (Result, error) {
	if err := p.st.between("Validate"); err != nil {
		return Result{}, err
	}
	k := p.st.k
	if err := finite("validation loss", k, loss); err != nil {
		return Result{}, err
	}
	ev := Event{Step: k, Kind: KindValidation, ValLoss: loss, BestLoss: p.best}
	best, bad, cool, lr := p.best, p.bad+1, p.cooldown, p.lr
	if p.better(loss) {
		best, bad = loss, 0
	}
	if cool > 0 {
		cool--
		bad = 0
	}
	ev.Bad = bad
	res := Result{Step: k, LR: lr, Events: []Event{ev}}
	if bad > p.cfg.Patience {
		if n := math.Max(lr*p.cfg.Factor, p.cfg.MinLR); lr-n > p.cfg.Eps {
			lr = n
			res.Events = append(res.Events, Event{Step: k, Kind: KindDrop, NewLR: lr, Reason: "validation"})
		}
		cool, bad = p.cfg.Cooldown, 0
	}
	p.best, p.bad, p.cooldown, p.lr, p.checks = best, bad, cool, lr, p.checks+1
	res.NextLR = lr
	p.opt.emit("plateau", res.Events)
	return res, nil
}

// State returns the state between steps.
func (p *Plateau) State() PlateauState {
	st := PlateauState{Step: p.st.k, LR: p.lr, Bad: p.bad, Cooldown: p.cooldown, Checks: p.checks}
	if !math.IsInf(p.best, 1) {
		b := p.best
		st.Best = &b
	}
	return st
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (p *Plateau) MarshalBinary() ([]byte, error) {
	if err := p.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot("plateau", p.cfg, p.State())
}

// UnmarshalBinary restores a snapshot into any Plateau value.
func (p *Plateau) UnmarshalBinary(data []byte) error {
	var cfg PlateauConfig
	var st PlateauState
	if err := unmarshalSnapshot(data, "plateau", &cfg, &st); err != nil {
		return err
	}
	n, err := NewPlateau(cfg)
	if err != nil {
		return err
	}
	if err := firstErr(checkIntMin("State.Step", st.Step, 0), checkPos("State.LR", st.LR),
		checkIntMin("State.Bad", st.Bad, 0), checkIntMin("State.Cooldown", st.Cooldown, 0),
		checkIntMin("State.Checks", st.Checks, 0)); err != nil {
		return err
	}
	if st.Best != nil {
		if math.IsNaN(*st.Best) || math.IsInf(*st.Best, 0) {
			return fmt.Errorf("schedule: PlateauState.Best = %v: must be finite", *st.Best)
		}
		n.best = *st.Best
	}
	n.st = stepper{k: st.Step}
	n.lr, n.bad, n.cooldown, n.checks = st.LR, st.Bad, st.Cooldown, st.Checks
	n.opt = p.opt
	*p = *n
	return nil
}
