package schedule

import (
	"encoding/json"
	"fmt"
	"math"
)

// WithValidation adds the "w/ val" rule of paper §4 (Wikitext-2) to a
// scheduler: drop the learning rate when the validation loss stops improving
// or when the inner scheduler's own test fires, whichever comes first. The
// caller reports a validation loss with Validate, typically once an epoch.
type WithValidation struct {
	in   Dropper
	cfg  ValidationConfig
	opt  options
	best float64 // +Inf before the first check
	bad  int     // consecutive checks without improvement
	n    int     // checks so far
}

// ValidationState is the wrapper's own state.
type ValidationState struct {
	Best   *float64 // nil before the first check (JSON has no +Inf)
	Bad    int
	Checks int
}

// NewWithValidation wraps in.
func NewWithValidation(in Dropper, cfg ValidationConfig, opts ...Option) (*WithValidation, error) {
	if in == nil {
		return nil, fmt.Errorf("schedule: NewWithValidation: the inner scheduler is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &WithValidation{in: in, cfg: cfg, opt: buildOptions(opts), best: math.Inf(1)}, nil
}

func (v *WithValidation) Name() string                            { return v.in.Name() + "-val" }
func (v *WithValidation) LR() float64                             { return v.in.LR() }
func (v *WithValidation) Step() int                               { return v.in.Step() }
func (v *WithValidation) Searching() bool                         { return v.in.Searching() }
func (v *WithValidation) Begin(loss, gd float64) (Request, error) { return v.in.Begin(loss, gd) }
func (v *WithValidation) Trial(f float64) (Request, error)        { return v.in.Trial(f) }
func (v *WithValidation) End(obs Observation) (Result, error)     { return v.in.End(obs) }
func (v *WithValidation) Abort()                                  { v.in.Abort() }
func (v *WithValidation) Drop(reason string) (Result, error)      { return v.in.Drop(reason) }
func (v *WithValidation) Inner() Dropper                          { return v.in }

// setOptions sets the options of the wrapper and of the inner scheduler,
// as New gives them to both.
func (v *WithValidation) setOptions(o options) {
	v.opt = o
	if in, ok := v.in.(interface{ setOptions(options) }); ok {
		in.setOptions(o)
	}
}

// Validate reports a validation loss between steps. If it has not improved
// on the best so far by more than MinDelta for more than Patience checks in a
// row, the inner scheduler drops (reason "validation") and the count
// restarts. It returns ErrPhase while a step is open, and changes nothing
// (for an inner scheduler of this package; another Dropper's Drop decides).
func (v *WithValidation) Validate(loss float64) (Result, error) {
	if in, ok := v.in.(interface{ between(string) error }); ok {
		if err := in.between("Validate"); err != nil {
			return Result{}, err
		}
	}
	k := v.in.Step()
	if err := finite("validation loss", k, loss); err != nil {
		return Result{}, err
	}
	ev := Event{Step: k, Kind: KindValidation, ValLoss: loss, BestLoss: v.best}
	bad := v.bad + 1
	if loss < v.best-v.cfg.MinDelta {
		bad = 0
	}
	ev.Bad = bad
	res := Result{Step: k, LR: v.in.LR(), NextLR: v.in.LR()}
	if bad > v.cfg.Patience {
		d, err := v.in.Drop("validation")
		if err != nil {
			return Result{}, err
		}
		res.NextLR, res.ResetMomentum = d.NextLR, d.ResetMomentum
		res.Events = append([]Event{ev}, d.Events...)
		bad = 0
	} else {
		res.Events = []Event{ev}
	}
	v.bad, v.n = bad, v.n+1
	v.best = math.Min(v.best, loss)
	v.opt.emit(v.Name(), res.Events[:1])
	return res, nil
}

// State returns the wrapper's own state; the inner scheduler has its own.
func (v *WithValidation) State() ValidationState {
	st := ValidationState{Bad: v.bad, Checks: v.n}
	if !math.IsInf(v.best, 1) {
		b := v.best
		st.Best = &b
	}
	return st
}

type valSnapshot struct {
	Validation ValidationConfig
	Inner      json.RawMessage
}

// MarshalBinary writes a versioned snapshot holding the inner one.
func (v *WithValidation) MarshalBinary() ([]byte, error) {
	in, err := v.in.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return marshalSnapshot("validation", valSnapshot{Validation: v.cfg, Inner: in}, v.State())
}

// UnmarshalBinary restores a snapshot into any WithValidation value.
func (v *WithValidation) UnmarshalBinary(data []byte) error {
	opt := v.opt
	var cfg valSnapshot
	var st ValidationState
	if err := unmarshalSnapshot(data, "validation", &cfg, &st); err != nil {
		return err
	}
	in, err := Restore(cfg.Inner)
	if err != nil {
		return err
	}
	d, ok := in.(Dropper)
	if !ok {
		return fmt.Errorf("schedule: snapshot: inner scheduler %q cannot drop", in.Name())
	}
	n, err := NewWithValidation(d, cfg.Validation)
	if err != nil {
		return err
	}
	if st.Bad < 0 || st.Checks < 0 {
		return fmt.Errorf("schedule: ValidationState.Bad = %d, Checks = %d: must be ≥ 0", st.Bad, st.Checks)
	}
	n.bad, n.n = st.Bad, st.Checks
	if st.Best != nil {
		n.best = *st.Best
	}
	*v = *n
	v.setOptions(opt)
	return nil
}
