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
	dropRule
	cfg SASAConfig
	w   *stats.Window // Δ
	nu  *stats.Window // ν
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
	c := cutSpec{tau: cfg.Tau, divide: cfg.DivideLR, keepMomentum: cfg.KeepMomentum, after: cfg.DropAfter}
	return &SASA{dropRule: newDropRule("sasa", cfg.LR0, c, opts), cfg: cfg, w: w, nu: nu}, nil
}

func (s *SASA) Name() string       { return "sasa" }
func (s *SASA) Config() SASAConfig { return s.cfg }

// End pushes Δ_k and ν_k and runs the equivalence test when it is due.
func (s *SASA) End(obs Observation) (Result, error) {
	delta, err := s.st.checkEnd(obs, s.lr)
	if err != nil {
		return Result{}, err
	}
	k := s.st.k + 1
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
	drops := s.wants(k, tested, ev.Stationary)
	if drops {
		if next, err = s.next(k, s.lr); err != nil {
			un.undo()
			uw.undo()
			return Result{}, err
		}
	}
	res := s.closeStep(k, s.lr, tested, &ev, drops, next, "stationarity", s.reset)
	s.opt.emit(s.Name(), res.Events)
	return res, nil
}

// reset restarts the windows after a drop.
func (s *SASA) reset() {
	s.w.Reset()
	s.nu.Reset()
}

// Drop implements [Dropper].
func (s *SASA) Drop(reason string) (Result, error) { return s.dropNow(reason, s.reset) }

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
	if err := s.restoreRule("SASAState", st.Step, st.Drops, st.LR); err != nil {
		return err
	}
	s.w, s.nu = w, nu
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
