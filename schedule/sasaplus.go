package schedule

import (
	"fmt"

	"github.com/salsaopt/salsa/stats"
)

// SASAPlus is SASA+ (paper Algorithm 1): keep α constant while the (1−δ)
// confidence interval of E[Δ] (eq. (15)) over the most recent
// ⌈θ(k−k_o)⌉ samples excludes 0; when it no longer does (tested every K_test
// steps once N > N_min), α ← τα, the window restarts and the caller zeroes
// the momentum.
type SASAPlus struct {
	dropRule
	cfg SASAPlusConfig
	m   *stationarity
}

// SASAPlusState is the state of SASA+ between steps.
type SASAPlusState struct {
	Step      int               // completed steps k
	LR        float64           // α for the next step
	Drops     int               // drops so far
	Composite bool              // the composite first-test rule is still in force
	Window    stats.WindowState // the Δ window
}

// NewSASAPlus returns SASA+ at step 0 with α = cfg.LR0.
func NewSASAPlus(cfg SASAPlusConfig, opts ...Option) (*SASAPlus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cutSpec{tau: cfg.Tau, divide: cfg.DivideLR, keepMomentum: cfg.KeepMomentum, after: cfg.DropAfter}
	return &SASAPlus{dropRule: newDropRule("sasa+", cfg.LR0, c, opts), cfg: cfg, m: newStationarity(cfg)}, nil
}

func (s *SASAPlus) Name() string           { return "sasa+" }
func (s *SASAPlus) Config() SASAPlusConfig { return s.cfg }

// End pushes Δ_k and runs the test when it is due.
func (s *SASAPlus) End(obs Observation) (Result, error) {
	res, err := s.end(obs, true)
	if err == nil {
		s.opt.emit(s.Name(), res.Events)
	}
	return res, err
}

// end closes the step; allowDrop false runs the test but never drops.
func (s *SASAPlus) end(obs Observation, allowDrop bool) (Result, error) {
	var p plusStep
	if err := s.prepare(obs, s.lr, allowDrop, &p); err != nil {
		return Result{}, err
	}
	return s.commit(&p), nil
}

// plusStep is an End of SASA+ computed but not yet committed: Δ_k is in the
// window (undo takes it back) and the test, if due, has run. It is passed by
// pointer: the event is large.
type plusStep struct {
	k      int
	lr     float64 // α_k
	tested bool
	ev     Event
	undo   undoPush
	drop   bool    // the test found stationarity and a drop is allowed
	next   float64 // α after the drop, when drop
}

// prepare checks the observation of the open step with learning rate lr,
// pushes Δ_k and runs the test if it is due, into *p; allowDrop false runs
// the test but never drops. On error nothing has changed; on success the
// caller either commits the step or calls p.undo.undo().
func (s *SASAPlus) prepare(obs Observation, lr float64, allowDrop bool, p *plusStep) error {
	delta, err := s.st.checkEnd(obs, lr)
	if err != nil {
		return err
	}
	p.k, p.lr = s.st.k+1, lr
	if p.tested, p.undo, err = s.m.observe(p.k, delta, &p.ev); err != nil {
		return err
	}
	p.drop = allowDrop && s.wants(p.k, p.tested, p.ev.Stationary)
	if p.drop {
		if p.next, err = s.next(p.k, lr); err != nil {
			p.undo.undo()
			return err
		}
	}
	return nil
}

// commit closes the step prepared in p; it cannot fail.
func (s *SASAPlus) commit(p *plusStep) Result {
	return s.closeStep(p.k, p.lr, p.tested, &p.ev, p.drop, p.next, "stationarity", s.m.reset)
}

// Drop implements [Dropper].
func (s *SASAPlus) Drop(reason string) (Result, error) { return s.dropNow(reason, s.m.reset) }

// SetLR sets α for the following steps without a drop: the window and the
// composite rule are kept. SALSA drives its SASA+ this way during SSLS.
func (s *SASAPlus) SetLR(lr float64) error {
	if err := s.st.between("SetLR"); err != nil {
		return err
	}
	if err := checkPos("SASAPlus.SetLR lr", lr); err != nil {
		return err
	}
	s.lr = lr
	return nil
}

// State returns a deep copy of the state.
func (s *SASAPlus) State() SASAPlusState {
	return SASAPlusState{Step: s.st.k, LR: s.lr, Drops: s.drops, Composite: s.m.composite, Window: s.m.w.State()}
}

// SetState replaces the state between steps, so that a test can build SASA+
// in any phase. The window's θ must be the configuration's.
func (s *SASAPlus) SetState(st SASAPlusState) error {
	if err := s.st.between("SetState"); err != nil {
		return err
	}
	w, err := restoreWindow("SASAPlusState.Window", st.Window, s.cfg.Theta)
	if err != nil {
		return err
	}
	if err := s.restoreRule("SASAPlusState", st.Step, st.Drops, st.LR); err != nil {
		return err
	}
	s.m.w, s.m.composite = w, st.Composite
	return nil
}

func restoreWindow(field string, ws stats.WindowState, theta float64) (*stats.Window, error) {
	if ws.Theta != theta {
		return nil, fmt.Errorf("schedule: %s.Theta = %v: must equal the configuration's θ = %v", field, ws.Theta, theta)
	}
	w, err := stats.NewWindowFromState(ws)
	if err != nil {
		return nil, fmt.Errorf("schedule: %s: %w", field, err)
	}
	return w, nil
}

// MarshalBinary writes a versioned snapshot (JSON) of the configuration and
// the state. It fails while a step is open.
func (s *SASAPlus) MarshalBinary() ([]byte, error) {
	if err := s.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(s.Name(), s.cfg, s.State())
}

// UnmarshalBinary restores a snapshot written by MarshalBinary, into any
// SASAPlus value including the zero value.
func (s *SASAPlus) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "sasa+", NewSASAPlus, (*SASAPlus).SetState)
	if err != nil {
		return err
	}
	n.opt = s.opt
	*s = *n
	return nil
}
