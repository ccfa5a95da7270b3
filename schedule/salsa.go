package schedule

import (
	"fmt"

	"github.com/salsaopt/salsa/stats"
)

// SALSA is paper Algorithm 3: SSLS warms the learning rate up until either
// the SLOPE test finds the loss no longer decreasing or SASA+'s test cannot
// reject stationarity; from then on SASA+ schedules alone.
//
// It is a composition, not a subclass: an [SSLS] sets α during the warmup, a
// [SASAPlus] run at that same α collects Δ from step 1 (its window is not
// reset by a SLOPE switch), and a SLOPE test watches the line-search losses
// f(x_k). A stationarity result during SSLS drops α and switches, as in
// statopt.
type SALSA struct {
	cfg      SALSAConfig
	opt      options
	ssls     *SSLS
	plus     *SASAPlus
	slope    *slopeMonitor
	switched bool
	reason   string
	at       int // the switch step
}

// SALSAState is the state of SALSA between steps.
type SALSAState struct {
	SSLS        SSLSState
	SASAPlus    SASAPlusState
	SlopeWindow stats.WindowState
	Switched    bool
	Reason      string // why it switched: "slope", "stationarity", "forced", or a Drop reason
	SwitchStep  int
}

// NewSALSA returns SALSA at step 0 with α_0 = cfg.SSLS.LR0.
func NewSALSA(cfg SALSAConfig, opts ...Option) (*SALSA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.SASAPlus.LR0 = cfg.SSLS.LR0
	ssls, err := NewSSLS(cfg.SSLS)
	if err != nil {
		return nil, err
	}
	plus, err := NewSASAPlus(cfg.SASAPlus)
	if err != nil {
		return nil, err
	}
	return &SALSA{cfg: cfg, opt: buildOptions(opts), ssls: ssls, plus: plus, slope: newSlopeMonitor(cfg.Slope)}, nil
}

func (s *SALSA) Name() string         { return "salsa" }
func (s *SALSA) Step() int            { return s.plus.Step() }
func (s *SALSA) Searching() bool      { return !s.switched }
func (s *SALSA) Config() SALSAConfig  { return s.cfg }
func (s *SALSA) setOptions(o options) { s.opt = o }

// between returns ErrPhase while a step is open (SASA+ observes every step).
func (s *SALSA) between(what string) error { return s.plus.st.between(what) }

// Switched reports whether SASA+ has taken over, why, and at which step.
func (s *SALSA) Switched() (switched bool, reason string, step int) {
	return s.switched, s.reason, s.at
}

// LR is the rate the next step starts from.
func (s *SALSA) LR() float64 {
	if s.switched {
		return s.plus.LR()
	}
	return s.ssls.LR()
}

// Begin opens a step: a line search before the switch, SASA+ after.
func (s *SALSA) Begin(loss, gd float64) (Request, error) {
	if s.switched {
		return s.plus.Begin(loss, gd)
	}
	if err := s.plus.st.between("Begin"); err != nil {
		return Request{}, err
	}
	req, err := s.ssls.Begin(loss, gd)
	if err != nil {
		return Request{}, err
	}
	_ = s.plus.st.begin(loss, gd) // same inputs, already checked: SASA+ observes this step too
	return req, nil
}

// Trial reports a line-search evaluation.
func (s *SALSA) Trial(f float64) (Request, error) {
	if s.switched {
		return s.plus.Trial(f)
	}
	return s.ssls.Trial(f)
}

// Abort discards the open step.
func (s *SALSA) Abort() {
	s.ssls.Abort()
	s.plus.Abort()
}

// End closes the step. Before the switch the events come in statopt's order:
// the SLOPE test and a SLOPE switch (decided on f(x_k), before the update),
// then SASA+'s test, a drop and a stationarity switch.
//
// Everything that can fail runs first (the checks, both windows' pushes and
// tests); the three parts commit together only then, so that an error leaves
// SSLS, SASA+ and the SLOPE window as they were.
func (s *SALSA) End(obs Observation) (Result, error) {
	if s.switched {
		res, err := s.plus.end(obs, true)
		if err == nil {
			s.opt.emit(s.Name(), res.Events)
		}
		return res, err
	}
	if err := s.ssls.checkEnd(obs); err != nil {
		return Result{}, err
	}
	lr := s.ssls.pend
	var p plusStep
	if err := s.plus.prepare(obs, lr, !s.cfg.NoStationaritySwitch, &p); err != nil { // SASA+ observes this step at SSLS's α_k
		return Result{}, err
	}
	k := p.k
	var slopeEv Event
	var slopeTested bool
	if !s.cfg.NoSlopeSwitch {
		var err error
		slopeEv, slopeTested, _, err = s.slope.observe(k, s.ssls.st.loss)
		if err != nil {
			p.undo.undo()
			return Result{}, err
		}
	}

	// Commit: nothing below fails.
	r1 := s.ssls.commit()
	var evs []Event
	if slopeTested {
		evs = append(evs, slopeEv)
		if !slopeEv.Decreasing {
			evs = append(evs, s.switchNow(k, "slope"))
		}
	}
	r2 := s.plus.commit(&p)
	evs = append(evs, r2.Events...)
	if n := len(r2.Events); n > 0 && r2.Events[n-1].Kind == KindDrop && !s.switched {
		evs = append(evs, s.switchNow(k, "stationarity"))
	}
	if !s.switched && s.cfg.ForceSwitchAt > 0 && k >= s.cfg.ForceSwitchAt {
		evs = append(evs, s.switchNow(k, "forced"))
	}
	res := Result{Step: k, LR: lr, NextLR: s.LR(), ResetMomentum: r2.ResetMomentum,
		Searched: true, Eta: r1.Eta, Events: evs}
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

func (s *SALSA) switchNow(k int, reason string) Event {
	s.switched, s.reason, s.at = true, reason, k
	return Event{Step: k, Kind: KindSwitch, Reason: reason}
}

// Drop implements [Dropper]. Before the switch it also switches, giving the
// drop's reason.
func (s *SALSA) Drop(reason string) (Result, error) {
	if err := s.plus.st.between("Drop"); err != nil {
		return Result{}, err
	}
	old := s.plus.lr
	if !s.switched {
		s.plus.lr = s.ssls.lr
	}
	res, err := s.plus.Drop(reason)
	if err != nil {
		s.plus.lr = old
		return res, err
	}
	if !s.switched {
		res.Events = append(res.Events, s.switchNow(res.Step, reason))
	}
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

// State returns a deep copy of the state between steps.
func (s *SALSA) State() SALSAState {
	return SALSAState{SSLS: s.ssls.State(), SASAPlus: s.plus.State(), SlopeWindow: s.slope.w.State(),
		Switched: s.switched, Reason: s.reason, SwitchStep: s.at}
}

// SetState replaces the state between steps.
func (s *SALSA) SetState(st SALSAState) error {
	if err := s.plus.st.between("SetState"); err != nil {
		return err
	}
	if st.SSLS.Step != st.SASAPlus.Step && !st.Switched {
		return fmt.Errorf("schedule: SALSAState.SSLS.Step = %d: must equal SASAPlus.Step = %d before the switch", st.SSLS.Step, st.SASAPlus.Step)
	}
	w, err := restoreWindow("SALSAState.SlopeWindow", st.SlopeWindow, s.cfg.Slope.Theta)
	if err != nil {
		return err
	}
	// Set both parts on copies and commit them together, so that an invalid
	// SASAPlus state does not leave SSLS replaced.
	ssls := *s.ssls
	if err := ssls.SetState(st.SSLS); err != nil {
		return err
	}
	plus, m := *s.plus, *s.plus.m
	plus.m = &m
	if err := plus.SetState(st.SASAPlus); err != nil {
		return err
	}
	*s.ssls, *s.plus = ssls, plus
	s.slope.w = w
	s.switched, s.reason, s.at = st.Switched, st.Reason, st.SwitchStep
	return nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (s *SALSA) MarshalBinary() ([]byte, error) {
	if err := s.plus.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(s.Name(), s.cfg, s.State())
}

// UnmarshalBinary restores a snapshot into any SALSA value.
func (s *SALSA) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "salsa", NewSALSA, (*SALSA).SetState)
	if err != nil {
		return err
	}
	n.opt = s.opt
	*s = *n
	return nil
}
