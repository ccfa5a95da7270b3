package schedule

import (
	"fmt"
	"math"

	"github.com/salsaopt/salsa/stats"
)

// SASA is the equivalence-test method of Lang, Zhang and Xiao (2019), the
// baseline of paper appendix B.1: it drops α ← τα when the (1−δ) interval of
// E[Δ] lies inside the equivalence interval [−ζν̄, ζν̄] (eq. (27)),
// where ν̄ is the window mean of ν_k = (α/2)‖d_k‖², the magnitude of Δ's
// second term. Its null hypothesis is non-stationarity, the opposite of
// SASA+'s. The windows of Δ and ν share one membership.
type SASA struct {
	cfg   SASAConfig
	opt   options
	st    stepper
	lr    float64
	drops int
	w     *stats.Window // Δ
	nu    *stats.Window // ν
}

// SASAState is the state of SASA between steps.
type SASAState struct {
	Step     int
	LR       float64
	Drops    int
	Window   stats.WindowState // Δ
	NuWindow stats.WindowState // ν
}

// NewSASA returns SASA at step 0.
func NewSASA(cfg SASAConfig, opts ...Option) (*SASA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, _ := stats.NewWindow(cfg.Theta)
	nu, _ := stats.NewWindow(cfg.Theta)
	return &SASA{cfg: cfg, opt: buildOptions(opts), lr: cfg.LR0, w: w, nu: nu}, nil
}

func (s *SASA) Name() string                   { return "sasa" }
func (s *SASA) LR() float64                    { return s.lr }
func (s *SASA) Step() int                      { return s.st.k }
func (s *SASA) Searching() bool                { return false }
func (s *SASA) Config() SASAConfig             { return s.cfg }
func (s *SASA) Abort()                         { s.st.abort() }
func (s *SASA) setOptions(o options)           { s.opt = o }
func (s *SASA) between(what string) error      { return s.st.between(what) }
func (s *SASA) Trial(float64) (Request, error) { return Request{}, noTrial(s.st.k + 1) }

// Begin opens a step.
func (s *SASA) Begin(loss, gd float64) (Request, error) {
	if err := s.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: s.lr}, nil
}

// End pushes Δ_k and ν_k and runs the equivalence test when it is due.
func (s *SASA) End(obs Observation) (Result, error) {
	delta, err := s.st.checkEnd(obs, s.lr)
	if err != nil {
		return Result{}, err
	}
	k := s.st.k + 1
	res := Result{Step: k, LR: s.lr}
	// Push first and test, then commit: a failed test takes the pushes back.
	uw, err := push(s.w, delta)
	if err != nil {
		return Result{}, err
	}
	un, err := push(s.nu, obs.D2*(0.5*s.lr)) // finite: checked with Δ
	if err != nil {
		uw.undo()
		return Result{}, err
	}
	var ev Event
	tested := due(s.w, k, s.cfg.NMin, s.cfg.KTest)
	if tested {
		iv, err := stats.MeanInterval(s.w.Values(), s.cfg.Variance, s.cfg.Delta)
		if err != nil {
			un.undo()
			uw.undo()
			return Result{}, fmt.Errorf("schedule: step %d: %w", k, err)
		}
		margin := s.cfg.Zeta * stats.Mean(s.nu.Values())
		if math.IsInf(margin, 0) {
			un.undo()
			uw.undo()
			return Result{}, fmt.Errorf("schedule: step %d: the equivalence margin ζ·ν̄ overflows (ζ = %v, N = %d)", k, s.cfg.Zeta, s.nu.Len())
		}
		ev = Event{Step: k, Kind: KindEquivalenceTest, Count: iv.N, Mean: iv.Mean, Lower: iv.Lower, Upper: iv.Upper,
			Mean1: iv.Mean1, Mean2: iv.Mean2, Std: iv.Std, Dof: iv.Dof, Margin: margin, Stationary: iv.Equivalent(margin)}
	}
	var next float64
	drops := tested && ev.Stationary && k > s.cfg.DropAfter
	if drops {
		if next, err = dropped(s.Name(), k, s.lr, s.cfg.Tau, s.cfg.DivideLR); err != nil {
			un.undo()
			uw.undo()
			return Result{}, err
		}
	}
	s.st.commit()
	if tested {
		res.Events = append(res.Events, ev)
		if drops {
			res.Events = append(res.Events, s.drop(k, next, "stationarity"))
			res.ResetMomentum = !s.cfg.KeepMomentum
		}
	}
	res.NextLR = s.lr
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

// drop sets α to next, the rate dropped computed, and restarts the windows.
func (s *SASA) drop(k int, next float64, reason string) Event {
	s.lr = next
	s.drops++
	s.w.Reset()
	s.nu.Reset()
	return Event{Step: k, Kind: KindDrop, NewLR: s.lr, Reason: reason}
}

// Drop implements [Dropper].
func (s *SASA) Drop(reason string) (Result, error) {
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
func (s *SASA) State() SASAState {
	return SASAState{Step: s.st.k, LR: s.lr, Drops: s.drops, Window: s.w.State(), NuWindow: s.nu.State()}
}

// SetState replaces the state between steps.
func (s *SASA) SetState(st SASAState) error {
	if err := s.st.between("SetState"); err != nil {
		return err
	}
	w, err := restoreWindow("SASAState.Window", st.Window, s.cfg.Theta)
	if err != nil {
		return err
	}
	nu, err := restoreWindow("SASAState.NuWindow", st.NuWindow, s.cfg.Theta)
	if err != nil {
		return err
	}
	if st.Window.Total != st.NuWindow.Total {
		return fmt.Errorf("schedule: SASAState.NuWindow.Total = %d: must equal Window.Total = %d", st.NuWindow.Total, st.Window.Total)
	}
	if err := firstErr(checkIntMin("SASAState.Step", st.Step, 0), checkIntMin("SASAState.Drops", st.Drops, 0),
		checkPos("SASAState.LR", st.LR)); err != nil {
		return err
	}
	s.st = stepper{k: st.Step}
	s.lr, s.drops, s.w, s.nu = st.LR, st.Drops, w, nu
	return nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (s *SASA) MarshalBinary() ([]byte, error) {
	if err := s.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(s.Name(), s.cfg, s.State())
}

// UnmarshalBinary restores a snapshot into any SASA value.
func (s *SASA) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "sasa", NewSASA, (*SASA).SetState)
	if err != nil {
		return err
	}
	n.opt = s.opt
	*s = *n
	return nil
}
