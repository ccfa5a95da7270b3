package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/salsaopt/salsa/stats"
)

// Option configures what a scheduler does besides deciding.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger makes the scheduler log every event to l: tests at Debug,
// drops and switches at Info. The library never prints otherwise.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

func buildOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (o options) emit(name string, evs []Event) {
	if o.log == nil {
		return
	}
	for _, e := range evs {
		lvl := slog.LevelDebug
		if e.Kind == KindDrop || e.Kind == KindSwitch || e.Kind == KindDecay {
			lvl = slog.LevelInfo
		}
		o.log.LogAttrs(context.Background(), lvl, "salsa event", slog.String("scheduler", name), slog.Any("event", e))
	}
}

// stepper is the bookkeeping every scheduler shares: the number of completed
// steps k, the open step and the checks on its inputs. Nothing is committed
// before End, so an error anywhere leaves the state as it was before Begin.
type stepper struct {
	k    int
	open bool
	loss float64 // f(x_k) of the open step
	gd   float64 // ⟨g_k, s_k⟩ of the open step
}

func (s *stepper) begin(loss, gd float64) error {
	if s.open {
		return fmt.Errorf("%w: Begin at step %d while a step is open (call End or Abort)", ErrPhase, s.k+1)
	}
	if err := finite("loss", s.k+1, loss); err != nil {
		return err
	}
	if err := finite("gd", s.k+1, gd); err != nil {
		return err
	}
	s.open, s.loss, s.gd = true, loss, gd
	return nil
}

// checkEnd validates the observation of the open step and the Δ it gives
// with learning rate lr, without committing anything.
func (s *stepper) checkEnd(obs Observation, lr float64) (delta float64, err error) {
	if !s.open {
		return 0, fmt.Errorf("%w: End at step %d without Begin", ErrPhase, s.k+1)
	}
	k := s.k + 1
	if err := finite("X1D", k, obs.X1D); err != nil {
		return 0, err
	}
	if err := finite("D2", k, obs.D2); err != nil {
		return 0, err
	}
	if obs.D2 < 0 {
		return 0, fmt.Errorf("schedule: step %d: D2 = %v: a squared norm must be ≥ 0", k, obs.D2)
	}
	// statopt: stats_ld2 = d2; stats_ld2 *= 0.5*lr; val = x1d + stats_ld2.
	delta = obs.X1D + obs.D2*(0.5*lr)
	if math.IsInf(delta, 0) {
		return 0, fmt.Errorf("schedule: step %d: Δ = X1D + (α/2)·D2 overflows (X1D = %v, D2 = %v, α = %v): %w", k, obs.X1D, obs.D2, lr, ErrNonFinite)
	}
	return delta, nil
}

// checkX2 checks step k's ‖x_{k+1}‖² ([Observation.X2]): finite and ≥ 0.
func checkX2(k int, x2 float64) error {
	if err := finite("X2", k, x2); err != nil {
		return err
	}
	if x2 < 0 {
		return fmt.Errorf("schedule: step %d: X2 = %v: a squared norm must be ≥ 0", k, x2)
	}
	return nil
}

func (s *stepper) commit() int {
	s.k++
	s.open = false
	return s.k
}

func (s *stepper) abort() { s.open = false }

func (s *stepper) between(what string) error {
	if s.open {
		return fmt.Errorf("%w: %s while step %d is open", ErrPhase, what, s.k+1)
	}
	return nil
}

func noTrial(k int) error {
	return fmt.Errorf("%w: Trial at step %d: no trial was requested", ErrPhase, k)
}

// stationarity is the statistical part of SASA+ (Algorithm 1, lines 5–9):
// the leaky-bucket window of Δ and the confidence-interval test.
type stationarity struct {
	w         *stats.Window
	nmin      int
	ktest     int
	delta     float64
	variance  stats.VarianceMethod
	signCheck bool
	composite bool // the composite rule is in force (statopt: until the first drop)
}

func newStationarity(c SASAPlusConfig) *stationarity {
	w, _ := stats.NewWindow(c.Theta) // Theta validated by the caller
	return &stationarity{w: w, nmin: c.NMin, ktest: c.KTest, delta: c.Delta, variance: c.Variance,
		signCheck: c.SignCheck, composite: c.Composite}
}

// due reports whether step k tests: N > N_min (strict) and k mod K_test = 0,
// with N counted after the sample of step k is pushed and k the global step.
func due(w *stats.Window, k, nmin, ktest int) bool {
	return w.Len() > nmin && k%ktest == 0
}

// observe pushes Δ_k and runs the test if it is due, writing its event into
// *ev (a pointer: the event is large and most steps do not test). On error the
// window is as it was; on success the push can still be taken back with the
// undo.
func (m *stationarity) observe(k int, delta float64, ev *Event) (tested bool, u undoPush, err error) {
	u, err = push(m.w, delta)
	if err != nil {
		return false, undoPush{}, err
	}
	if !due(m.w, k, m.nmin, m.ktest) {
		return false, u, nil
	}
	iv, err := stats.MeanInterval(m.w.Values(), m.variance, m.delta)
	if err != nil {
		u.undo()
		return false, undoPush{}, fmt.Errorf("schedule: step %d: %w", k, err)
	}
	*ev = Event{Step: k, Kind: KindTest, Count: iv.N, Mean: iv.Mean, Lower: iv.Lower, Upper: iv.Upper,
		Mean1: iv.Mean1, Mean2: iv.Mean2, Std: iv.Std, Dof: iv.Dof,
		Stationary: iv.Stationary(m.signCheck, m.composite), Composite: m.composite}
	return true, u, nil
}

// reset starts a new window after a drop and ends the composite rule.
func (m *stationarity) reset() {
	m.w.Reset()
	m.composite = false
}

// slopeMonitor is the SLOPE test on a leaky-bucket window of losses.
type slopeMonitor struct {
	w     *stats.Window
	nmin  int
	ktest int
	delta float64
}

func newSlopeMonitor(c SlopeConfig) *slopeMonitor {
	w, _ := stats.NewWindow(c.Theta)
	return &slopeMonitor{w: w, nmin: c.NMin, ktest: c.KTest, delta: c.Delta}
}

// observe pushes the loss of step k and runs the test if it is due. The
// abscissa of the window is total−N … total−1, as statopt's linregress. On
// error the window is as it was; on success the push can still be taken back
// with the undo.
func (m *slopeMonitor) observe(k int, loss float64) (ev Event, tested bool, u undoPush, err error) {
	u, err = push(m.w, loss)
	if err != nil {
		return Event{}, false, undoPush{}, err
	}
	if !due(m.w, k, m.nmin, m.ktest) {
		return Event{}, false, u, nil
	}
	n := m.w.Len()
	r, err := stats.SlopeTest(m.w.Values(), float64(m.w.Total()-n), m.delta)
	if err != nil {
		u.undo()
		return Event{}, false, undoPush{}, fmt.Errorf("schedule: step %d: %w", k, err)
	}
	return Event{Step: k, Kind: KindSlopeTest, Count: n, Slope: r.Slope, Prob: r.Prob, Decreasing: r.Decreasing}, true, u, nil
}

// undoPush takes back one Push into a window. A Push forgets two things: the
// number of pushes before it and the oldest sample when it leaked one; push
// records them in O(1), so that End can push first, test, and still leave the
// window exactly as it was when the test fails. undo rebuilds the window in
// O(N), on the error path only. The zero value undoes nothing.
type undoPush struct {
	w      *stats.Window
	total  int     // w.Total() before the push
	leaked bool    // the push dropped the oldest sample
	oldest float64 // that sample
}

// push pushes v into w and returns how to take the push back. On error w is
// unchanged (stats.Window.Push checks v first).
func push(w *stats.Window, v float64) (undoPush, error) {
	u := undoPush{w: w, total: w.Total()}
	n := w.Len()
	if n > 0 {
		u.oldest = w.Values()[0]
	}
	if err := w.Push(v); err != nil {
		return undoPush{}, err
	}
	u.leaked = w.Len() == n
	return u, nil
}

// undo restores the window as it was before the push. It must run before any
// other change to the window.
func (u undoPush) undo() {
	if u.w == nil {
		return
	}
	cur := u.w.Values()
	vals := make([]float64, 0, len(cur))
	if u.leaked {
		vals = append(vals, u.oldest)
	}
	vals = append(vals, cur[:len(cur)-1]...)
	w, err := stats.NewWindowFromState(stats.WindowState{Theta: u.w.Theta(), Total: u.total, Values: vals})
	if err != nil { // the values and their count were those of a valid window
		panic("schedule: undoing a window push: " + err.Error())
	}
	*u.w = *w
}
