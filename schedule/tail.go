package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// TailConfig is the end of a known budget that [Tail] adds to a statistical
// schedule: over the last D = max(1, round(Fraction·T)) of the budget's T
// steps, the rate decays linearly to zero from the one the schedule had
// reached at step T − D.
//
// The budget is the user's --epochs, not a tuned number; Fraction 0.2 is
// WSD's (Hägele et al. 2024), fixed for every task.
type TailConfig struct {
	Steps    int     // T ≥ 1: the budget, total optimizer steps
	Fraction float64 // ∈ (0, 1]: the decay's share of the budget (0.2)
}

// decaySteps is D.
func (c TailConfig) decaySteps() int {
	return max(1, int(math.Round(c.Fraction*float64(c.Steps))))
}

// Validate reports the first invalid field.
func (c TailConfig) Validate() error {
	return firstErr(checkIntMin("TailConfig.Steps", c.Steps, 1), checkTheta("TailConfig.Fraction", c.Fraction))
}

// Tail is a statistical schedule that knows its budget: until step T − D it
// is the inner scheduler (SALSA for the method "salsa-budget": the SSLS
// warm-up, the switch, SASA+'s drops); from step T − D + 1 on the rate is
//
//	α_k = α_s·(1 − (k − (T−D) − 1)/D),   T − D < k ≤ T,
//
// with α_s the inner scheduler's rate after step T − D, and α_T past the
// budget. The tail runs no line search and no test: within D steps of the
// end a test that found a stationary phase could make at most one more drop,
// where the decay anneals the noise of the last phase whatever α_s is. At
// step T − D it emits a [KindDecay] event.
type Tail struct {
	cfg   TailConfig
	opt   options
	inner Scheduler
	st    stepper // used once the tail has begun
	start float64 // α_s; 0 before the tail
}

// NewTail wraps inner, which must be at step 0.
func NewTail(cfg TailConfig, inner Scheduler, opts ...Option) (*Tail, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if inner == nil {
		return nil, errors.New("schedule: NewTail: inner scheduler is nil")
	}
	if inner.Step() != 0 {
		return nil, fmt.Errorf("schedule: NewTail: inner scheduler at step %d: must be at step 0", inner.Step())
	}
	t := &Tail{cfg: cfg, opt: buildOptions(opts), inner: inner}
	t.maybeBegin()
	return t, nil
}

// Name is the inner scheduler's name with "-budget" ("salsa-budget").
func (t *Tail) Name() string { return t.inner.Name() + "-budget" }

// Config returns the configuration.
func (t *Tail) Config() TailConfig { return t.cfg }

// Inner returns the scheduler the tail wraps; between steps before the
// tail it is the one deciding.
func (t *Tail) Inner() Scheduler { return t.inner }

// Decaying reports whether the tail has begun, and the rate α_s it decays
// from.
func (t *Tail) Decaying() (bool, float64) { return t.start > 0, t.start }

func (t *Tail) setOptions(o options) {
	t.opt = o
	if in, ok := t.inner.(interface{ setOptions(options) }); ok {
		in.setOptions(o)
	}
}

// tailStart is T − D, the last step of the inner scheduler.
func (t *Tail) tailStart() int { return t.cfg.Steps - t.cfg.decaySteps() }

// maybeBegin starts the tail when the inner scheduler has made T − D steps
// (at once for T − D = 0); it reports whether it did.
func (t *Tail) maybeBegin() bool {
	if t.start > 0 || t.inner.Step() < t.tailStart() {
		return false
	}
	t.start = t.inner.LR()
	t.st = stepper{k: t.inner.Step()}
	return true
}

// lrAt is α_k in the tail, 1-based.
func (t *Tail) lrAt(k int) float64 {
	k = min(k, t.cfg.Steps)
	d := t.cfg.decaySteps()
	return t.start * (1 - float64(k-(t.cfg.Steps-d)-1)/float64(d))
}

// Step is the number of completed steps.
func (t *Tail) Step() int {
	if t.start > 0 {
		return t.st.k
	}
	return t.inner.Step()
}

// LR is the rate the next step starts from.
func (t *Tail) LR() float64 {
	if t.start > 0 {
		return t.lrAt(t.st.k + 1)
	}
	return t.inner.LR()
}

// Searching reports whether the next step runs a line search.
func (t *Tail) Searching() bool { return t.start == 0 && t.inner.Searching() }

// Begin opens a step.
func (t *Tail) Begin(loss, gd float64) (Request, error) {
	if t.start == 0 {
		return t.inner.Begin(loss, gd)
	}
	if err := t.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: t.LR()}, nil
}

// Trial reports a line-search evaluation.
func (t *Tail) Trial(f float64) (Request, error) {
	if t.start == 0 {
		return t.inner.Trial(f)
	}
	return Request{}, noTrial(t.st.k + 1)
}

// Abort discards the open step.
func (t *Tail) Abort() {
	if t.start == 0 {
		t.inner.Abort()
		return
	}
	t.st.abort()
}

// End closes the step; at step T − D the tail begins.
func (t *Tail) End(obs Observation) (Result, error) {
	if t.start == 0 {
		res, err := t.inner.End(obs)
		if err != nil {
			return res, err
		}
		if t.maybeBegin() {
			ev := Event{Step: res.Step, Kind: KindDecay, NewLR: t.start, Reason: "budget"}
			res.Events = append(res.Events, ev)
			res.NextLR = t.LR()
			t.opt.emit(t.Name(), []Event{ev})
		}
		return res, nil
	}
	lr := t.LR()
	if _, err := t.st.checkEnd(obs, lr); err != nil {
		return Result{}, err
	}
	k := t.st.commit()
	return Result{Step: k, LR: lr, NextLR: t.LR()}, nil
}

// tailSnapshot is Tail's state: the inner scheduler's own snapshot, and the
// tail's step and α_s once it has begun.
type tailSnapshot struct {
	Inner json.RawMessage
	Step  int
	Start float64
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (t *Tail) MarshalBinary() ([]byte, error) {
	if t.start > 0 {
		if err := t.st.between("MarshalBinary"); err != nil {
			return nil, err
		}
	}
	in, err := t.inner.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return marshalSnapshot("tail", t.cfg, tailSnapshot{Inner: in, Step: t.st.k, Start: t.start})
}

// UnmarshalBinary restores a snapshot into any Tail value, the zero value
// included; the inner scheduler comes from the snapshot.
func (t *Tail) UnmarshalBinary(data []byte) error {
	var cfg TailConfig
	var st tailSnapshot
	if err := unmarshalSnapshot(data, "tail", &cfg, &st); err != nil {
		return err
	}
	if err := checkIntMin("TailState.Step", st.Step, 0); err != nil {
		return err
	}
	if st.Start < 0 || math.IsInf(st.Start, 0) || math.IsNaN(st.Start) {
		return &FieldError{"TailState.Start", st.Start, "must be finite and ≥ 0"}
	}
	in, err := Restore(st.Inner)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	n := &Tail{cfg: cfg, opt: t.opt, inner: in, st: stepper{k: st.Step}, start: st.Start}
	if o, ok := in.(interface{ setOptions(options) }); ok {
		o.setOptions(t.opt)
	}
	*t = *n
	return nil
}
