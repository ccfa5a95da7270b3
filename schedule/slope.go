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
	dropRule
	cfg SlopeConfig
	m   *slopeMonitor
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
	c := cutSpec{tau: cfg.Tau, divide: cfg.DivideLR, keepMomentum: cfg.KeepMomentum, after: cfg.DropAfter}
	return &Slope{dropRule: newDropRule("slope", cfg.LR0, c, opts), cfg: cfg, m: newSlopeMonitor(cfg)}, nil
}

func (s *Slope) Name() string        { return "slope" }
func (s *Slope) Config() SlopeConfig { return s.cfg }

// End pushes f(x_k) and runs the test when it is due.
func (s *Slope) End(obs Observation) (Result, error) {
	if _, err := s.st.checkEnd(obs, s.lr); err != nil {
		return Result{}, err
	}
	k := s.st.k + 1
	ev, tested, undo, err := s.m.observe(k, s.st.loss) // on error the window is as it was
	if err != nil {
		return Result{}, err
	}
	var next float64
	drops := s.wants(k, tested, !ev.Decreasing)
	if drops {
		if next, err = s.next(k, s.lr); err != nil {
			undo.undo()
			return Result{}, err
		}
	}
	res := s.closeStep(k, s.lr, tested, &ev, drops, next, "slope", s.reset)
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

// reset restarts the window after a drop.
func (s *Slope) reset() { s.m.w.Reset() }

// Drop implements [Dropper].
func (s *Slope) Drop(reason string) (Result, error) { return s.dropNow(reason, s.reset) }

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
	if err := s.restoreRule("SlopeState", st.Step, st.Drops, st.LR); err != nil {
		return err
	}
	s.m.w = w
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
