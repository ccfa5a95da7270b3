package schedule

import (
	"github.com/salsaopt/salsa/stats"
)

// Slope uses the SLOPE test (paper eq. (16)) as a drop rule: every
// K_test steps, once the window holds N > N_min losses f(x_k), if the
// one-sided t-test cannot say the least-squares slope is negative, α ← τα and
// the window restarts. The paper shows it drops too eagerly after the first
// drop (§2.3, appendix C); it is here as the baseline it is there.
type Slope struct {
	cfg   SlopeConfig
	opt   options
	st    stepper
	lr    float64
	drops int
	m     *slopeMonitor
}

// SlopeState is the state of Slope between steps.
type SlopeState struct {
	Step   int
	LR     float64
	Drops  int
	Window stats.WindowState
}

// NewSlope returns the SLOPE drop rule at step 0.
func NewSlope(cfg SlopeConfig, opts ...Option) (*Slope, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Slope{cfg: cfg, opt: buildOptions(opts), lr: cfg.LR0, m: newSlopeMonitor(cfg)}, nil
}

func (s *Slope) Name() string                   { return "slope" }
func (s *Slope) LR() float64                    { return s.lr }
func (s *Slope) Step() int                      { return s.st.k }
func (s *Slope) Searching() bool                { return false }
func (s *Slope) Config() SlopeConfig            { return s.cfg }
func (s *Slope) Abort()                         { s.st.abort() }
func (s *Slope) setOptions(o options)           { s.opt = o }
func (s *Slope) between(what string) error      { return s.st.between(what) }
func (s *Slope) Trial(float64) (Request, error) { return Request{}, noTrial(s.st.k + 1) }

// Begin opens a step with the loss the test will use.
func (s *Slope) Begin(loss, gd float64) (Request, error) {
	if err := s.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: s.lr}, nil
}

// End pushes f(x_k) and runs the test when it is due.
func (s *Slope) End(obs Observation) (Result, error) {
	if _, err := s.st.checkEnd(obs, s.lr); err != nil {
		return Result{}, err
	}
	k := s.st.k + 1
	res := Result{Step: k, LR: s.lr}
	ev, tested, undo, err := s.m.observe(k, s.st.loss) // on error the window is as it was
	if err != nil {
		return Result{}, err
	}
	var next float64
	drops := tested && !ev.Decreasing && k > s.cfg.DropAfter
	if drops {
		if next, err = dropped(s.Name(), k, s.lr, s.cfg.Tau, s.cfg.DivideLR); err != nil {
			undo.undo()
			return Result{}, err
		}
	}
	s.st.commit()
	if tested {
		res.Events = append(res.Events, ev)
		if drops {
			res.Events = append(res.Events, s.drop(k, next, "slope"))
			res.ResetMomentum = !s.cfg.KeepMomentum
		}
	}
	res.NextLR = s.lr
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

// drop sets α to next, the rate dropped computed, and restarts the window.
func (s *Slope) drop(k int, next float64, reason string) Event {
	s.lr = next
	s.drops++
	s.m.w.Reset()
	return Event{Step: k, Kind: KindDrop, NewLR: s.lr, Reason: reason}
}

// Drop implements [Dropper].
func (s *Slope) Drop(reason string) (Result, error) {
	if err := s.st.between("Drop"); err != nil {
		return Result{}, err
	}
	next, err := dropped(s.Name(), s.st.k, s.lr, s.cfg.Tau, s.cfg.DivideLR)
	if err != nil {
		return Result{}, err
	}
	ev := s.drop(s.st.k, next, reason)
	s.opt.emit(s.Name(), []Event{ev})
	return Result{Step: s.st.k, LR: s.lr, NextLR: s.lr, ResetMomentum: !s.cfg.KeepMomentum, Events: []Event{ev}}, nil
}

// State returns a deep copy of the state between steps.
func (s *Slope) State() SlopeState {
	return SlopeState{Step: s.st.k, LR: s.lr, Drops: s.drops, Window: s.m.w.State()}
}

// SetState replaces the state between steps.
func (s *Slope) SetState(st SlopeState) error {
	if err := s.st.between("SetState"); err != nil {
		return err
	}
	w, err := restoreWindow("SlopeState.Window", st.Window, s.cfg.Theta)
	if err != nil {
		return err
	}
	if err := firstErr(checkIntMin("SlopeState.Step", st.Step, 0), checkIntMin("SlopeState.Drops", st.Drops, 0),
		checkPos("SlopeState.LR", st.LR)); err != nil {
		return err
	}
	s.st = stepper{k: st.Step}
	s.lr, s.drops, s.m.w = st.LR, st.Drops, w
	return nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (s *Slope) MarshalBinary() ([]byte, error) {
	if err := s.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(s.Name(), s.cfg, s.State())
}

// UnmarshalBinary restores a snapshot into any Slope value.
func (s *Slope) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "slope", NewSlope, (*Slope).SetState)
	if err != nil {
		return err
	}
	n.opt = s.opt
	*s = *n
	return nil
}
