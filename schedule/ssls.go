package schedule

import (
	"fmt"
	"math"
)

// SSLS is the smoothed stochastic line search (paper Algorithm 2). At step k
// it tries η = ρ_inc·α_{k−1} and, while the Armijo test
//
//	f(x_k − η s_k) < f(x_k) − c·η·⟨g_k, s_k⟩
//
// fails, η ← ρ_dec·η, for at most m trials; the last decrease is not tested.
// Then α_k = (1−γ)α_{k−1} + γη_k. When ⟨g_k,s_k⟩ ≤ 0 (not a descent
// direction) it takes η_k = ρ_dec·α_{k−1} without a trial, as statopt does.
//
// The trials come back by reverse communication: Begin and Trial return the
// η to evaluate, and the caller reports f(x_k − η s_k) on the same mini-batch.
type SSLS struct {
	cfg SSLSConfig
	opt options
	st  stepper
	lr  float64 // α_{k−1}

	// The open step.
	eta    float64
	tries  int
	asking bool    // a trial at eta is outstanding
	ready  bool    // the search is over; pend is α_k
	pend   float64 // α_k once ready
}

// SSLSState is the state of SSLS between steps.
type SSLSState struct {
	Step int
	LR   float64 // α_{k}: the rate the next search starts from
}

// NewSSLS returns SSLS at step 0 with α_0 = cfg.LR0.
func NewSSLS(cfg SSLSConfig, opts ...Option) (*SSLS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SSLS{cfg: cfg, opt: buildOptions(opts), lr: cfg.LR0}, nil
}

func (s *SSLS) Name() string         { return "ssls" }
func (s *SSLS) LR() float64          { return s.lr }
func (s *SSLS) Step() int            { return s.st.k }
func (s *SSLS) Searching() bool      { return true }
func (s *SSLS) Config() SSLSConfig   { return s.cfg }
func (s *SSLS) setOptions(o options) { s.opt = o }

// Abort discards the open step.
func (s *SSLS) Abort() {
	s.st.abort()
	s.asking, s.ready = false, false
}

// Begin opens step k with f(x_k) and gd = ⟨g_k, s_k⟩. It fails, with no
// step open, when ρ_inc·α_{k−1} (or ρ_dec·α_{k−1}) leaves float64's range:
// a loss that accepts every trial drives α up without bound.
func (s *SSLS) Begin(loss, gd float64) (Request, error) {
	if err := s.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	eta := s.lr * s.cfg.RhoInc
	if gd <= 0 {
		eta = s.lr * s.cfg.RhoDec
	}
	if err := s.checkRate(eta); err != nil {
		s.st.abort()
		return Request{}, err
	}
	s.tries, s.asking, s.ready = 0, false, false
	s.eta = eta
	if gd <= 0 || s.cfg.M == 0 {
		return s.finish(), nil
	}
	s.asking = true
	return Request{Eval: true, Eta: s.eta}, nil
}

// checkRate returns an error, naming the step, when η or the rate
// α_k = (1−γ)α_{k−1} + γη it would give is +Inf or 0.
func (s *SSLS) checkRate(eta float64) error {
	lr := s.smooth(eta)
	if !math.IsInf(eta, 0) && !math.IsInf(lr, 0) && eta > 0 && lr > 0 {
		return nil
	}
	why := "overflows: ρ_inc·α was taken step after step (accepted, or untested with m = 0), and the loss never bounded it"
	if eta == 0 || lr == 0 {
		why = "underflows to 0: the trials failed step after step, so the loss did not decrease along s at any rate tried"
	}
	return fmt.Errorf("schedule: step %d: SSLS's rate %s (α_{k−1} = %v, η = %v, α_k = %v)", s.st.k+1, why, s.lr, eta, lr)
}

// smooth is α_k = (1−γ)α_{k−1} + γη.
func (s *SSLS) smooth(eta float64) float64 { return (1-s.cfg.Gamma)*s.lr + s.cfg.Gamma*eta }

// Trial reports f(x_k − η s_k) for the requested η. +Inf fails the Armijo
// test; NaN and −Inf are errors. So is a decrease of η that would take the
// rate to 0; each error leaves the trial outstanding.
func (s *SSLS) Trial(f float64) (Request, error) {
	if !s.st.open || !s.asking {
		return Request{}, noTrial(s.st.k + 1)
	}
	if math.IsNaN(f) || math.IsInf(f, -1) {
		return Request{}, fmt.Errorf("schedule: step %d: trial loss at η = %v is %v: %w, or +Inf", s.st.k+1, s.eta, f, ErrNonFinite)
	}
	// statopt: if f1 > f0 - ls_sdc*eta*g_dot_d: reject.
	thr := s.st.loss - s.cfg.C*s.eta*s.st.gd
	accept := f < thr || (s.cfg.AcceptEqual && f == thr)
	if accept {
		s.asking = false
		return s.finish(), nil
	}
	eta := s.eta * s.cfg.RhoDec
	if err := s.checkRate(eta); err != nil {
		return Request{}, err
	}
	s.eta = eta
	s.tries++
	if s.tries < s.cfg.M {
		return Request{Eval: true, Eta: s.eta}, nil
	}
	s.asking = false
	return s.finish(), nil
}

func (s *SSLS) finish() Request {
	s.pend = s.smooth(s.eta)
	s.ready = true
	return Request{LR: s.pend}
}

// End closes the step: α_k becomes the rate the next search starts from.
func (s *SSLS) End(obs Observation) (Result, error) {
	if err := s.checkEnd(obs); err != nil {
		return Result{}, err
	}
	return s.commit(), nil
}

// checkEnd checks that End may close the open step with obs, changing nothing.
func (s *SSLS) checkEnd(obs Observation) error {
	if s.st.open && !s.ready {
		return fmt.Errorf("%w: End at step %d while a trial is outstanding", ErrPhase, s.st.k+1)
	}
	_, err := s.st.checkEnd(obs, s.pend)
	return err
}

// commit closes the open step once checkEnd has passed; it cannot fail.
func (s *SSLS) commit() Result {
	k := s.st.commit()
	s.lr, s.ready = s.pend, false
	return Result{Step: k, LR: s.lr, NextLR: s.lr, Searched: true, Eta: s.eta}
}

// SetLR sets α_k between steps.
func (s *SSLS) SetLR(lr float64) error {
	if err := s.st.between("SetLR"); err != nil {
		return err
	}
	if err := checkPos("SSLS.SetLR lr", lr); err != nil {
		return err
	}
	s.lr = lr
	return nil
}

// State returns the state between steps.
func (s *SSLS) State() SSLSState { return SSLSState{Step: s.st.k, LR: s.lr} }

// SetState replaces the state between steps.
func (s *SSLS) SetState(st SSLSState) error {
	if err := s.st.between("SetState"); err != nil {
		return err
	}
	if err := firstErr(checkIntMin("SSLSState.Step", st.Step, 0), checkPos("SSLSState.LR", st.LR)); err != nil {
		return err
	}
	s.st = stepper{k: st.Step}
	s.lr = st.LR
	return nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (s *SSLS) MarshalBinary() ([]byte, error) {
	if err := s.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(s.Name(), s.cfg, s.State())
}

// UnmarshalBinary restores a snapshot into any SSLS value.
func (s *SSLS) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "ssls", NewSSLS, (*SSLS).SetState)
	if err != nil {
		return err
	}
	n.opt = s.opt
	*s = *n
	return nil
}
