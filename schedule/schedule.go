// Package schedule holds the learning-rate schedulers of the paper and its
// baselines, each a state machine driven by explicit per-step inputs.
//
// # Protocol
//
// A training step k (1-based, as statopt's nSteps after the update) talks to a
// [Scheduler] in three calls, in the style of gonum/optimize's reverse
// communication: the scheduler says what it needs, the caller computes it.
//
//	req, err := s.Begin(loss, gd)   // loss f(x_k) with its L2 term; gd = ⟨g_k, s_k⟩
//	for req.Eval {                  // SSLS only: evaluate a trial step
//		f := lossAt(x - req.Eta*s)  // eval mode, same mini-batch
//		req, err = s.Trial(f)
//	}
//	x -= req.LR * d                 // the update x_{k+1} = x_k − α_k d_k
//	res, err := s.End(schedule.Observation{X1D: dot(x, d), D2: dot(d, d)})
//	res, err = schedule.AnswerVal(s, res, valLoss) // salsa-probe with ProbeVal: NeedVal
//	if res.Save { cand = copy(x) }           // salsa-budget's probe only
//	if res.Confirm {                         // idem: the candidate is kept
//		if res.KeepEarlier { earlier = keep } // with ProbeLevelCopy
//		keep, cand = cand, nil
//	}
//	if res.Rollback { x = copy(keep) }       // idem, with ResetMomentum set
//	                                         // (copy(earlier) with RollbackEarlier)
//	if res.Release { earlier, keep, cand = nil, nil, nil } // idem: no Rollback follows
//	if res.ResetMomentum { dir.Reset() }
//	if res.Average { n++; xbar += (x - xbar) / n } // Tail with Average: the decay's iterates
//
// At the end of the budget a [Tail] with [TailConfig.Average] (salsa-probe)
// decides between xbar and x on validation cells: [Tail.PickAverage].
//
// s_k is the line-search direction: g_k for the paper's Algorithm 2 and for
// statopt (ls_dir='g'), d_k when [SSLSConfig.SearchAlong] is [AlongD]. A
// scheduler that runs no line search ignores gd, and [Scheduler.Searching]
// tells the caller whether it must compute it at all.
//
// A decision taken at step k (a drop, a switch) applies from step k+1 on: the
// learning rate returned by the next Begin is [Result.NextLR].
//
// A [ValAsker] may need the validation loss at x_{k+1} to decide: its End
// then returns a Result with only Step, LR and NeedVal set, the step is
// over but its decisions wait, and [ValAsker.ReportVal] returns the step's
// Result in place of End's. Until then Begin and MarshalBinary return
// [ErrPhase], and Abort does not take the step back.
//
// # Errors
//
// Every method validates its inputs first. NaN or ±Inf in a loss, an inner
// product or a squared norm is rejected with an error that names the input and
// the step, and the scheduler's state is left exactly as it was, so the caller
// may skip the batch and go on. The one exception is a line-search trial of
// +Inf, which is the overflow of a too-long step and counts as a failed
// Armijo test. Calls out of order (End before Begin, Trial when no trial was
// asked for) return [ErrPhase].
//
// Every call is atomic, errors found after the input checks included: when
// a test's statistics overflow float64 (finite but huge losses or Δ, whose
// squares are +Inf), End returns the error and leaves the state as it was
// before the call, with the step still open: the caller may call End again
// with another observation, or Abort. The same holds when a rate would leave
// float64's range: SSLS's α overflowing or underflowing, or a drop taking α
// below float64's smallest normal number (hundreds of drops); Drop and
// Validate then return the error and change nothing.
package schedule

import (
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"math"
)

// Request is what a scheduler asks of the caller for the current step.
type Request struct {
	// Eval is true while the line search needs f_ξk(x_k − Eta·s_k) on the
	// current mini-batch, to be reported with [Scheduler.Trial].
	Eval bool
	// Eta is the trial step size η when Eval is true.
	Eta float64
	// LR is the learning rate α_k for the update x_{k+1} = x_k − α_k·d_k.
	// It is set when Eval is false.
	LR float64
}

// Observation carries the statistics of the update just made with the
// learning rate α_k of the last [Request].
//
// SASA+ forms Δ_k = ⟨x_k,d_k⟩ − (α_k/2)‖d_k‖² (paper, before eq.
// confi-interval) from them in the equivalent post-update form
// ⟨x_{k+1},d_k⟩ + (α_k/2)‖d_k‖², as statopt does.
type Observation struct {
	X1D float64 // ⟨x_{k+1}, d_k⟩
	D2  float64 // ‖d_k‖², not scaled by α/2
	// X2 is ‖x_{k+1}‖², read only by a scheduler that asks for it, at
	// the steps it asks ([NormAsker]: [Tail] with
	// [TailConfig.ProbeNormCap], until its decay); a caller that does not
	// measure it leaves it 0 and refuses such a scheduler.
	X2 float64
}

// Result reports what happened at the end of a step.
type Result struct {
	Step          int     // k, 1-based: the number of updates made so far
	LR            float64 // α_k, the learning rate this update used
	NextLR        float64 // the learning rate step k+1 starts from
	ResetMomentum bool    // true after a drop: the caller zeroes the direction's momentum
	// Save asks the caller to copy the parameters x_{k+1} as a candidate,
	// replacing any candidate it holds. Confirm, set at the same step or at
	// the next, makes the candidate the kept copy, replacing the one kept
	// before; a candidate not confirmed waits to be replaced by the next
	// Save, or freed by the Release. Rollback asks the caller to put the
	// kept copy back (ResetMomentum is then set too). Only [Tail]'s rate
	// probe with [TailConfig.ProbeRollback] sets them; a caller that cannot
	// keep copies must refuse that configuration rather than ignore them.
	Save, Confirm, Rollback bool
	// KeepEarlier, set only with Confirm, asks the caller to keep the copy
	// it held as the kept one as the earlier copy, replacing any earlier
	// copy, before the candidate replaces it; with no copy kept yet there
	// is nothing to keep. RollbackEarlier, set only with Rollback, asks it
	// to put back that earlier copy instead of the kept one. Only [Tail]'s
	// probe with [TailConfig.ProbeLevelCopy] sets them.
	KeepEarlier, RollbackEarlier bool
	// Release tells the caller that no Rollback follows (the probe has
	// ended and the decay begun, or with [TailConfig.ProbeCapConfirm] a
	// decay the cap began has had its first step checked, which may roll
	// back): the copies (kept, candidate, earlier) can be
	// freed, after the Confirm and the Rollback of the same step if there
	// are any.
	Release bool
	// NeedVal: the step's decisions need the validation loss at x_{k+1},
	// the parameters after this update (before any Rollback): the caller
	// evaluates it and reports it with [ValAsker.ReportVal], whose Result
	// replaces this one, which has only Step, LR and NeedVal set. Only
	// [Tail]'s rate probe with [TailConfig.ProbeVal] sets it; a caller that
	// cannot evaluate a validation loss must refuse a scheduler whose
	// [ValAsker.AsksVal] is true.
	NeedVal bool
	// Average asks the caller to fold x_{k+1}, the parameters after this
	// update (after any Rollback), into the uniform average x̄ of the
	// decay's iterates: x̄ ← x̄ + (x_{k+1} − x̄)/n at the n-th such step,
	// the first making x̄ = x_{k+1}. With a Rollback at the same step the
	// average starts again there: the x_{k+1} put back is folded as the
	// first, the iterates before it dropped. Only [Tail] with
	// [TailConfig.Average] sets it, at every step from the one the decay
	// begins at; at the end of the budget the caller picks x̄ or the last
	// iterate with [Tail.PickAverage].
	Average  bool
	Searched bool    // a line search ran at this step
	Eta      float64 // the step η_k the line search settled on, when Searched
	Events   []Event // every test and decision of this step, in order; nil if none
}

// CheckEarlier reports a KeepEarlier without its Confirm or a
// RollbackEarlier without its Rollback, which a caller refuses before it
// copies anything.
func (r Result) CheckEarlier() error {
	if r.KeepEarlier && !r.Confirm || r.RollbackEarlier && !r.Rollback {
		return fmt.Errorf("step %d: KeepEarlier %v with Confirm %v, RollbackEarlier %v with Rollback %v: each needs the other",
			r.Step, r.KeepEarlier, r.Confirm, r.RollbackEarlier, r.Rollback)
	}
	return nil
}

// Scheduler is a learning-rate schedule driven one step at a time.
//
// Every implementation in this package passes the suite in package schedtest.
type Scheduler interface {
	// Name is the method's name as the CLI spells it ("salsa", "sasa+", ...).
	Name() string
	// LR is the learning rate the next step would start from.
	LR() float64
	// Step is the number of completed steps.
	Step() int
	// Searching reports whether the next step runs a line search, that is,
	// whether Begin needs gd.
	Searching() bool
	// Begin starts a step with the mini-batch loss f_ξk(x_k) (including the L2
	// term if the objective has one) and gd = ⟨g_k, s_k⟩.
	Begin(loss, gd float64) (Request, error)
	// Trial reports f_ξk(x_k − η·s_k) for the η of the last request.
	Trial(f float64) (Request, error)
	// End reports the statistics of the update and closes the step.
	End(obs Observation) (Result, error)
	// Abort discards the open step, if any: the state is as before Begin.
	// Use it to skip a batch whose gradient turned out not to be finite.
	Abort()

	// MarshalBinary writes a versioned snapshot of the configuration and the
	// state between steps; UnmarshalBinary restores it, after which the
	// scheduler takes exactly the decisions the original would have.
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Dropper is implemented by schedulers that can be told to drop their
// learning rate from outside, which is how [WithValidation] composes.
type Dropper interface {
	Scheduler
	// Drop multiplies the learning rate by the scheduler's τ now, between
	// steps, as if its own test had fired. The result carries the drop event
	// and whether the caller must zero the momentum.
	Drop(reason string) (Result, error)
}

// Kind names an event.
type Kind int

const (
	KindTest            Kind = iota + 1 // SASA+ stationarity test (statopt's stats_test)
	KindSlopeTest                       // SLOPE test (statopt's linregress)
	KindDrop                            // learning-rate drop
	KindSwitch                          // SALSA's switch from SSLS to SASA+
	KindEquivalenceTest                 // SASA's equivalence test (Lang et al. 2019)
	KindValidation                      // a validation-loss check of WithValidation
	KindDecay                           // Tail: the budget's final decay to zero begins
	KindProbe                           // Tail: the rate probe's start, and each window's verdict
	KindAverage                         // Tail: the pick between the decay's average and the last iterate
)

var kindNames = [...]string{
	KindTest:            "test",
	KindSlopeTest:       "slope_test",
	KindDrop:            "drop",
	KindSwitch:          "switch",
	KindEquivalenceTest: "equivalence_test",
	KindValidation:      "val_check",
	KindDecay:           "decay",
	KindProbe:           "probe",
	KindAverage:         "average",
}

// String returns the kind as the events CSV spells it.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind is the inverse of [Kind.String].
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("schedule: unknown event kind %q", s)
}

// Event is one test or decision. Which fields are meaningful depends on Kind;
// the layout follows the conformance events format, where each kind is one CSV
// row (see package trace).
type Event struct {
	Step int
	Kind Kind

	// KindTest and KindEquivalenceTest: the window and its interval.
	Count      int     // samples in the window
	Mean       float64 // window mean of Δ
	Lower      float64 // Mean − half-width
	Upper      float64 // Mean + half-width
	Mean1      float64 // mean of the first half of the window
	Mean2      float64 // mean of the second half
	Std        float64 // σ̂_N from the variance estimator
	Dof        int     // its degrees of freedom
	Stationary bool    // the test's verdict (KindTest: cannot reject stationarity)
	Composite  bool    // the composite first-test rule was in force
	Margin     float64 // KindEquivalenceTest: ζ·ν̄, the half-width of the equivalence interval

	// KindSlopeTest.
	Slope      float64 // least-squares slope of the loss window
	Prob       float64 // one-sided t CDF of the slope statistic, N−2 dof
	Decreasing bool    // Prob < δ: the loss is still falling

	// KindProbe: Count steps of mean loss Mean (the step's loss for an
	// outlier) at the rate NewLR under test, against the accepted window's
	// mean Prev (with [TailConfig.ProbeWelch], the best accepted window's,
	// the reference of its test); Reason "start", "outlier" (two in a row
	// ended the probe), [ReasonEndsOnOutlier] (accepted, its last step an outlier),
	// [ReasonCandidateOutlier] (Count 1: the loss at the copy of the last
	// accepted window, an outlier, at the rate NewLR that reached it),
	// [ReasonRetry] (rejected on its mean, the rate tried for one more
	// window) or "".
	Prev   float64
	Accept bool // the window is not significantly worse: the rate stays, and doubles; KindAverage: x̄ is kept

	// KindAverage: Count validation cells whose gains of x̄ over the last
	// iterate have mean Mean and standard deviation Std, z = Mean/(Std/√Count);
	// Reason "loss" or "accuracy", the metric of the cells.
	Z float64

	// KindDrop and KindDecay.
	NewLR  float64 // the learning rate after the drop; KindDecay: the rate α_s the decay starts from
	Reason string  // KindDrop and KindSwitch: "stationarity", "slope", "validation", "schedule", "forced"; KindDecay: "budget", "probe", "rollback", [ReasonRollbackToLevel] or [ReasonWarmupRise]

	// KindValidation.
	ValLoss  float64 // the validation loss reported
	BestLoss float64 // the best validation loss before this one
	Bad      int     // consecutive checks without improvement, this one included
}

// LogValue makes an Event print usefully with log/slog.
func (e Event) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Int("step", e.Step), slog.String("kind", e.Kind.String())}
	switch e.Kind {
	case KindTest, KindEquivalenceTest:
		attrs = append(attrs,
			slog.Int("count", e.Count), slog.Float64("mean", e.Mean),
			slog.Float64("lower", e.Lower), slog.Float64("upper", e.Upper),
			slog.Float64("mean1", e.Mean1), slog.Float64("mean2", e.Mean2),
			slog.Float64("std", e.Std), slog.Int("dof", e.Dof),
			slog.Bool("stationary", e.Stationary), slog.Bool("composite", e.Composite))
		if e.Kind == KindEquivalenceTest {
			attrs = append(attrs, slog.Float64("margin", e.Margin))
		}
	case KindSlopeTest:
		attrs = append(attrs, slog.Int("count", e.Count), slog.Float64("slope", e.Slope),
			slog.Float64("prob", e.Prob), slog.Bool("decreasing", e.Decreasing))
	case KindDrop:
		attrs = append(attrs, slog.Float64("new_lr", e.NewLR), slog.String("reason", e.Reason))
	case KindSwitch:
		attrs = append(attrs, slog.String("reason", e.Reason))
	case KindDecay:
		attrs = append(attrs, slog.Float64("new_lr", e.NewLR), slog.String("reason", e.Reason))
	case KindProbe:
		attrs = append(attrs, slog.Int("count", e.Count), slog.Float64("mean", e.Mean), slog.Float64("prev", e.Prev),
			slog.Bool("accept", e.Accept), slog.Float64("new_lr", e.NewLR), slog.String("reason", e.Reason))
	case KindAverage:
		attrs = append(attrs, slog.Int("count", e.Count), slog.Float64("mean", e.Mean), slog.Float64("std", e.Std),
			slog.Float64("z", e.Z), slog.Bool("accept", e.Accept), slog.String("reason", e.Reason))
	case KindValidation:
		attrs = append(attrs, slog.Float64("val_loss", e.ValLoss),
			slog.Float64("best", e.BestLoss), slog.Int("bad", e.Bad))
	}
	return slog.GroupValue(attrs...)
}

// ErrPhase is returned when a method is called out of the Begin, Trial*, End
// order.
var ErrPhase = errors.New("schedule: call out of order")

// ErrNonFinite is wrapped by the errors that report a NaN or ±Inf input
// (a loss, ⟨g, s⟩, X1D, D2, a validation loss; a trial loss that is NaN or
// −Inf) or a statistic Δ that overflows: in training, the sign that the run
// has diverged.
var ErrNonFinite = errors.New("must be finite")

// finite reports an error naming the input if v is NaN or ±Inf.
func finite(name string, step int, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("schedule: step %d: %s = %v: %w", step, name, v, ErrNonFinite)
	}
	return nil
}

// ValAsker is a scheduler whose End may ask for the validation loss at
// the parameters after the update ([Result.NeedVal]): [Tail] with
// [TailConfig.ProbeVal].
type ValAsker interface {
	Scheduler
	// AsksVal reports whether End may set [Result.NeedVal].
	AsksVal() bool
	// ReportVal reports the validation loss (finite; without an L2 term)
	// at x_{k+1} that the last End asked for, and returns step k's Result.
	// A non-finite loss is rejected with the state left as it was, still
	// waiting; a call when nothing was asked for returns [ErrPhase].
	ReportVal(loss float64) (Result, error)
}

// AsksVal reports whether s may ask for the validation loss after a step:
// a [ValAsker] whose AsksVal is true. A caller that cannot evaluate one
// refuses such a scheduler.
func AsksVal(s Scheduler) bool {
	va, ok := s.(ValAsker)
	return ok && va.AsksVal()
}

// NormAsker is a scheduler whose decisions read ‖x_{k+1}‖² in a step's
// [Observation.X2]: [Tail] with [TailConfig.ProbeNormCap], until its decay
// begins.
type NormAsker interface {
	Scheduler
	// AsksNorm reports whether the next End reads [Observation.X2]; a
	// caller asks before each step's End, and measures ‖x_{k+1}‖² only
	// then.
	AsksNorm() bool
}

// AsksNorm reports whether s's next End reads ‖x_{k+1}‖²
// ([Observation.X2]): a [NormAsker] whose AsksNorm is true. A caller that
// does not measure it refuses such a scheduler rather than pass zeros.
func AsksNorm(s Scheduler) bool {
	na, ok := s.(NormAsker)
	return ok && na.AsksNorm()
}

// Averager is a scheduler whose End may ask the caller to keep the average
// of the decay's iterates ([Result.Average]) and which picks, at the end of
// the budget, between it and the last iterate: [Tail] with
// [TailConfig.Average].
type Averager interface {
	Scheduler
	// Averages reports whether End may set [Result.Average].
	Averages() bool
	// PickAverage decides on the validation cells' gains of the average
	// over the last iterate (see [Tail.PickAverage]).
	PickAverage(gain []float64, metric string) (Event, error)
}

// Averages reports whether s may ask the caller to keep the average of
// the decay's iterates: an [Averager] whose Averages is true. A caller that
// cannot keep the average, or evaluate the validation cells to pick it,
// refuses such a scheduler.
func Averages(s Scheduler) bool {
	a, ok := s.(Averager)
	return ok && a.Averages()
}

// AnswerVal is the caller's side of [Result.NeedVal]: when res, the Result
// of s.End, asks for the validation loss, it calls loss for the loss at the
// parameters after the update and reports it with [ValAsker.ReportVal],
// returning the step's Result; otherwise it returns res. A scheduler that
// asks without being a ValAsker, a nil loss and an error from loss are
// errors, and leave s waiting.
func AnswerVal(s Scheduler, res Result, loss func() (float64, error)) (Result, error) {
	if !res.NeedVal {
		return res, nil
	}
	va, ok := s.(ValAsker)
	switch {
	case !ok:
		return res, fmt.Errorf("schedule: step %d: %s set NeedVal but is not a ValAsker", res.Step, s.Name())
	case loss == nil:
		return res, fmt.Errorf("schedule: step %d: %s asks for the validation loss, and there is none to give", res.Step, s.Name())
	}
	v, err := loss()
	if err != nil {
		return res, fmt.Errorf("schedule: step %d: the validation loss %s asked for: %w", res.Step, s.Name(), err)
	}
	return va.ReportVal(v)
}

// Validator is a scheduler that also steps on a validation loss, reported
// after the step that ends an epoch: [WithValidation] (the -val methods)
// and [Plateau].
type Validator interface {
	Scheduler
	Validate(loss float64) (Result, error)
}
