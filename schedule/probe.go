package schedule

import (
	"math"

	"github.com/salsaopt/salsa/stats"
)

// The rate probe of [TailConfig.Probe]. SSLS's level is a one-step test on
// the mini-batch, and on the deep tasks it settles far below the best
// constant rate (docs/parity: 0.016 on the cnn, where the tuned rate is 1).
// The probe tests a rate over a window of steps instead of one: from SALSA's
// switch it doubles the rate every W steps for as long as the window's mean
// mini-batch loss is not significantly above the last accepted window's,
// and at the first window that is, or at the second step in a row whose
// loss is an outlier, it goes back to the last accepted rate and hands over
// to the decay. It is not in the paper: docs/parity gives its measurements,
// made after the held-out tasks had been seen.
//
// With [TailConfig.ProbeEarly] the probe starts after the warm-up's first W
// steps instead of at the switch, so that a task where SALSA switches late
// still gets its windows. Early, the loss is still falling fast, and a
// window is accepted at rates where the next blows up (on the cnn: 2.3,
// after which the decay from 1.2 diverged, docs/parity). So when a rate
// fails there, the decay begins one level lower, at a quarter of the
// failed rate, with the momentum of the failed window zeroed. Without a
// way back to the parameters before the failed window this is not always
// enough: docs/parity has a cnn run that diverges after it.
//
// With [TailConfig.ProbeRollback] there is that way back: the caller keeps
// the parameters after every accepted window, and a failed rate puts them
// back before the decay. The early probe's back-off stays: decaying from
// the last accepted rate itself after a rollback diverged on a held-out
// cnn (docs/parity). A window accepted on its mean whose last step is an
// outlier does not renew the copy: on a held-out cnn the next step was a
// second outlier, and a rollback to the parameters after that window, the
// outlier's step included, went on diverging to chance (docs/parity).
// The copy made at the end of a window holds the window's last update,
// whose loss is the next step's: it is a candidate, and it replaces the
// copy a rollback puts back only when that loss is not an outlier. On a
// held-out cnn it was (10.37, at a rate that had just been accepted), and
// the decay from a rollback to it diverged (docs/parity).
//
// With [TailConfig.ProbeVal] two outliers in a row end the probe only when
// the validation loss agrees: the caller reports it ([Result.NeedVal]) at
// the probe's start and at the end of every window accepted with the probe
// going on, and at a second outlier in a row the probe ends only if the
// validation loss there is above the one at the last of those points;
// otherwise the outliers are overruled and the probe goes on. On a plateau
// of the training loss the accepted window's σ̂ is small, and a rate that
// breaks out of the plateau gives losses above the threshold that are not
// a divergence: on held-out H27, six of ten runs from lr0 1e-2 ended the
// probe that way at 43–49, where the tuned rate is 100 (docs/parity). The
// windows themselves stay judged on the training loss: judged on the
// validation loss, they were rejected on its noise (docs/parity).
//
// With [TailConfig.ProbeSettle] the early probe waits for the warm-up to
// settle: each doubling costs the probe a window, 5% of the budget, so a
// climb of k doublings costs k·5% of it, while SSLS raises its rate by up
// to ρ_inc per step. The probe takes over once SSLS's rate has risen by
// less than the probe's ×2 over the last W steps.
const (
	// probeShare is W's share of the budget: W = max(2, round(0.05·T)).
	probeShare = 0.05
	// probeRaise is the factor a window raises the rate by: ρ_inc = 2, as in SSLS.
	probeRaise = 2.0
	// probeZ is the one-sided normal quantile at δ = 0.05: a window is
	// rejected when its mean exceeds the accepted one's by z·√2·σ̂/√n, σ̂ and
	// n the accepted window's. With [TailConfig.ProbeT] the quantile is
	// Student's t with n − 1 degrees of freedom instead ([probeQuantile]).
	probeZ = 1.645
	// probeDelta is the window test's one-sided level, δ = 0.05, of which
	// probeZ is the normal quantile.
	probeDelta = 0.05
	// probeOutlier is in standard deviations of one step's loss in the
	// accepted window: two losses in a row above its mean by more end the
	// probe at once. A single one came from hard mini-batches at twice
	// SSLS's rate on the cnn (docs/parity); a rate that diverges gives several.
	probeOutlier = 4.0
	// probeHot is how many outliers in a row end the probe.
	probeHot = 2
)

// ReasonEndsOnOutlier is, with [TailConfig.ProbeRollback], the Reason of a
// [KindProbe] event whose window was accepted but whose last step's loss is
// an outlier: the parameters it reached are not kept, and a rollback goes
// back to the last accepted window that ended clean.
const ReasonEndsOnOutlier = "ends on outlier"

// ReasonCandidateOutlier is, with [TailConfig.ProbeRollback], the Reason of
// a [KindProbe] event at the step after an accepted window whose loss, the
// loss at the candidate copy of the parameters that window reached, is an
// outlier: the candidate is not confirmed ([Result.Confirm]), and a
// rollback goes back to the copy kept before it.
const ReasonCandidateOutlier = "outlier at copy"

// ReasonOverruled is, with [TailConfig.ProbeVal], the Reason of a
// [KindProbe] event at a second outlier in a row that does not end the
// probe, because the validation loss there (the [KindValidation] event
// before it) is not above the one at the last accepted point.
const ReasonOverruled = "outliers overruled"

// ReasonRetry is, with [TailConfig.ProbeRetry], the Reason of a [KindProbe]
// event whose window was rejected on its mean for the first time at its
// rate: the rate gets a second window.
const ReasonRetry = "retry"

// ReasonRollbackToLevel is, with [TailConfig.ProbeLevelCopy], the Reason
// of the [KindDecay] event of a rollback to the earlier copy, the one
// reached at the decay's level, instead of the kept one
// ([Result.RollbackEarlier]).
const ReasonRollbackToLevel = "rollback to level"

// ReasonNormCap is, with [TailConfig.ProbeNormCap], the Reason of the
// [KindProbe] event that ends the probe after an accepted window whose
// next one, at twice the rate, is projected to more than double ‖x‖²
// (Mean: that projected growth; Prev: ‖x_{k+1}‖²; NewLR: the rate not
// run), and of the [KindDecay] event that follows it.
const ReasonNormCap = "norm cap"

// ReasonCapOutlier is, with [TailConfig.ProbeCapConfirm], the Reason of the
// [KindProbe] event at the first step of a decay the cap began whose loss
// is an outlier against the capped window (Mean: that loss; Prev: the
// window's mean; NewLR: the decay's rate): the kept copy is put back.
const ReasonCapOutlier = "outlier after cap"

// ReasonDecayGuard is, with [TailConfig.DecayGuard], the Reason of the
// [KindProbe] event at a second loss in a row during the decay that is an
// outlier against the probe's last accepted window (Count: 2; Mean: that
// loss; Prev: the window's mean; NewLR: the next step's rate, on the
// halved line).
const ReasonDecayGuard = "decay guard"

// ReasonWarmupRise is, with [TailConfig.WarmupGuard], the Reason of the
// [KindDecay] event of a warm-up ended by a window whose mean loss is
// above the warm-up's best window's: the parameters go back to that
// window's end, and the decay begins from its rate.
const ReasonWarmupRise = "warm-up rise"

// probeWindow is the probe's window W.
func (c TailConfig) probeWindow() int {
	return max(2, int(math.Round(probeShare*float64(c.Steps))))
}

// probeRule is what the probe's window test depends on besides its state:
// the window W and the [TailConfig] keys that change the test.
type probeRule struct {
	W       int  // the window, [TailConfig.probeWindow]
	Retry   bool // a rate rejected on its mean gets a second window ([TailConfig.ProbeRetry])
	Student bool // Student's t quantile instead of the normal one ([TailConfig.ProbeT])
	Welch   bool // Welch's test against the best accepted window ([TailConfig.ProbeWelch])
}

// probeRule returns the probe's rule under c.
func (c TailConfig) probeRule() probeRule {
	return probeRule{W: c.probeWindow(), Retry: c.ProbeRetry, Student: c.ProbeT, Welch: c.ProbeWelch}
}

// probeState is the probe's state, all of it in a [Tail] snapshot.
type probeState struct {
	On   bool      // the probe is running: SALSA has switched, the decay has not begun
	LR   float64   // the rate under test
	OK   float64   // the last accepted rate
	Prev float64   // the last accepted window's mean loss (at first: the W steps before the switch)
	Sd   float64   // its sample standard deviation σ̂ (stats.Std, IID)
	PN   int       // its length n; below 2 there is nothing to compare with, and every window passes
	Win  []float64 // the losses of the current window; before the switch, the last W
	Hot  int       // outliers in a row, up to the last step
	// Cand, with ProbeRollback: the last step asked for a candidate copy
	// ([Result.Save]), which this step's loss confirms or not.
	Cand bool `json:",omitempty"`
	// Retry, with ProbeRetry: the rate under test had a window rejected on
	// its mean, and the current window is its second.
	Retry bool `json:",omitempty"`
	// Rates, with ProbeSettle and before the probe starts: the warm-up's
	// rate before the first step and after each step since, the last W + 1.
	Rates []float64 `json:",omitempty"`
	// Kept, with ProbeRollback: the rate that reached the kept copy, the
	// one a rollback puts back (the probe's start rate, then the rate of
	// each window whose candidate the next loss confirmed).
	Kept float64 `json:",omitempty"`
	// Earlier, with ProbeLevelCopy: the rate that reached the copy kept
	// before the kept one ([Result.KeepEarlier]); 0 while there is none.
	Earlier float64 `json:",omitempty"`
	// Val, with ProbeVal: the validation loss at the last accepted point,
	// the probe's start or the end of the last window accepted with the
	// probe going on.
	Val float64 `json:",omitempty"`
	// BestM, BestSd and BestN, with ProbeWelch: the mean, σ̂ and length of
	// the accepted window with the lowest mean (the probe's first, then any
	// accepted below it), the reference of Welch's window test.
	BestM  float64 `json:",omitempty"`
	BestSd float64 `json:",omitempty"`
	BestN  int     `json:",omitempty"`
	// GuardM, GuardSd and GuardN, with WarmupGuard and before the probe:
	// the mean, σ̂ and length of the warm-up's best window, the one with
	// the lowest mean, whose parameters were kept; GuardLR, SSLS's rate at
	// its end, the decay's if a later window's mean is above it.
	GuardM  float64 `json:",omitempty"`
	GuardSd float64 `json:",omitempty"`
	GuardN  int     `json:",omitempty"`
	GuardLR float64 `json:",omitempty"`
	// With ProbeNormCap: X2 is ‖x_{k+1}‖² at the last step, WinX2 at the
	// current window's start; LastG and PrevG are the last two accepted
	// windows' growth of ‖x‖², the last one first.
	X2    float64 `json:",omitempty"`
	WinX2 float64 `json:",omitempty"`
	LastG float64 `json:",omitempty"`
	PrevG float64 `json:",omitempty"`
	// CapCheck, with ProbeCapConfirm: the cap began the decay at the last
	// step, whose parameters this step's loss confirms or not.
	CapCheck bool `json:",omitempty"`
	// DecayHot, with DecayGuard: outliers in a row in the decay, up to the
	// last step.
	DecayHot int `json:",omitempty"`
}

// summary returns the mean, the sample standard deviation σ̂ (stats.Std,
// IID) and the length of a window. A window of fewer than two losses has
// σ̂ = 0, and none a mean of 0. A window whose mean or σ̂ overflows float64
// comes back with n = 0: nothing to compare with, so that every window
// passes and no loss is an outlier, which is what an infinite σ̂ means.
func summary(w []float64) (m, sd float64, n int) {
	if len(w) == 0 {
		return 0, 0, 0
	}
	m = stats.Mean(w)
	if len(w) > 1 {
		var err error
		if sd, _, err = stats.Std(stats.IID, w, m); err != nil {
			return 0, 0, 0
		}
	}
	if math.IsInf(m, 0) {
		return 0, 0, 0
	}
	return m, sd, len(w)
}

// add counts a step's loss in the current window; drop undoes the last
// add. Before the switch the window keeps the last w losses.
func (p *probeState) add(loss float64, w int) {
	p.Win = append(p.Win, loss)
	if !p.On && len(p.Win) > w {
		p.Win = p.Win[len(p.Win)-w:]
	}
}
func (p *probeState) drop() { p.Win = p.Win[:len(p.Win)-1] }

// rate records the warm-up's rate after a step (before the first: lr0),
// keeping the last w + 1.
func (p *probeState) rate(lr float64, w int) {
	p.Rates = append(p.Rates, lr)
	if len(p.Rates) > w+1 {
		p.Rates = append(p.Rates[:0], p.Rates[len(p.Rates)-w-1:]...)
	}
}

// settled reports whether the warm-up's rate rose by less than the probe's
// factor over the last w steps ([TailConfig.ProbeSettle]).
func (p *probeState) settled(w int) bool {
	n := len(p.Rates)
	return n == w+1 && p.Rates[n-1] < probeRaise*p.Rates[0]
}

// start begins the probe at rate lr, with the window before the switch as
// the first accepted one; with welch ([TailConfig.ProbeWelch]) it is the
// best one too.
func (p *probeState) start(lr float64, welch bool) {
	m, sd, n := summary(p.Win)
	*p = probeState{On: true, OK: lr, Kept: lr, LR: probeRaise * lr, Prev: m, Sd: sd, PN: n}
	if welch {
		p.BestM, p.BestSd, p.BestN = m, sd, n
	}
}

// guardRises reports whether a warm-up window of mean m, σ̂ sd and length n
// is above the warm-up's best window by Welch's one-sided test at δ = 0.05
// ([TailConfig.WarmupGuard]). Without two losses in each there is nothing
// to test, and it is not.
func (p *probeState) guardRises(m, sd float64, n int) bool {
	if p.GuardN < 2 || n < 2 {
		return false
	}
	w, err := stats.WelchTest(m, sd, n, p.GuardM, p.GuardSd, p.GuardN, probeDelta)
	// summary and check keep both windows finite here, so err is nil
	return err == nil && w.Larger
}

// outlier reports whether a step's loss is an outlier against the accepted
// window.
func (p *probeState) outlier(loss float64) bool {
	return p.PN > 1 && loss > p.Prev+probeOutlier*p.Sd
}

// probeQuantile is the window test's one-sided quantile at δ = 0.05 for an
// accepted window of pn ≥ 2 losses: the normal one, z = 1.645, or with
// student ([TailConfig.ProbeT]) Student's t with pn − 1 degrees of freedom,
// the quantile of a test whose σ̂ comes from those pn losses (2.132 at a
// window of 5, 1.729 at 20).
func probeQuantile(pn int, student bool) float64 {
	if !student {
		return probeZ
	}
	return stats.TQuantile(1-probeDelta, pn-1)
}

// accepts reports whether a window of mean m, σ̂ sd and length n passes
// under rule r: against the last accepted window, or with r.Welch by
// Welch's test against the best one ([probeState.welch]).
func (p *probeState) accepts(m, sd float64, n int, r probeRule) bool {
	if n < r.W {
		return false
	}
	if r.Welch {
		return p.welch(m, sd, n)
	}
	return p.PN < 2 || m < p.Prev+probeQuantile(p.PN, r.Student)*math.Sqrt2*p.Sd/math.Sqrt(float64(p.PN))
}

// welch is the window test of [TailConfig.ProbeWelch]: a window of mean m,
// σ̂ sd and length n passes unless Welch's one-sided test at δ = 0.05 says
// its mean is above the best accepted window's (stats.WelchTest). With
// fewer than two losses in either window there is nothing to test, and
// the window passes, as in the test against the last one.
func (p *probeState) welch(m, sd float64, n int) bool {
	if p.BestN < 2 || n < 2 {
		return true
	}
	w, err := stats.WelchTest(m, sd, n, p.BestM, p.BestSd, p.BestN, probeDelta)
	// summary and check keep both windows finite with n ≥ 2 here, so err is
	// nil; were it not, the window fails rather than passes untested
	return err == nil && !w.Larger
}

// ref is the mean a window is compared with under rule r: the last accepted
// window's, or with r.Welch the best one's.
func (p *probeState) ref(r probeRule) float64 {
	if r.Welch {
		return p.BestM
	}
	return p.Prev
}

// asks reports, without changing p, whether closing a step of loss loss
// needs the validation loss ([TailConfig.ProbeVal]): at a second outlier in
// a row, whose verdict it gives, and at a window accepted with the probe
// going on (not the last step), whose end it is the reference of.
func (p *probeState) asks(loss float64, r probeRule, last bool) bool {
	if p.outlier(loss) && p.Hot+1 >= probeHot {
		return true
	}
	if len(p.Win) < r.W || last {
		return false
	}
	m, sd, n := summary(p.Win)
	return p.accepts(m, sd, n, r)
}

// end closes step k, whose loss was loss, at the rate under test, under
// rule r; last is true at the latest step the decay may begin. asked says
// that val is the validation loss at the step's parameters, which
// [probeState.asks] asked for ([TailConfig.ProbeVal]). It returns the
// step's events and, when the probe is over, the rate the decay begins
// from and whether the rate under test failed (a rejected window or
// outliers), as opposed to running out of budget.
func (p *probeState) end(k int, loss float64, r probeRule, last bool, val float64, asked bool) (evs []Event, done bool, from float64, failed bool) {
	if p.outlier(loss) {
		p.Hot++
	} else {
		p.Hot = 0
	}
	checked := false // the validation loss's event is in evs
	if p.Hot >= probeHot && asked {
		bad := 0
		if val > p.Val {
			bad = 1
		}
		evs = append(evs, Event{Step: k, Kind: KindValidation, ValLoss: val, BestLoss: p.Val, Bad: bad})
		checked = true
		if bad == 0 {
			evs = append(evs, Event{Step: k, Kind: KindProbe, Count: len(p.Win), Mean: loss, Prev: p.Prev, Accept: true, NewLR: p.LR,
				Reason: ReasonOverruled})
			p.Hot = 0
		}
	}
	if p.Hot >= probeHot {
		evs = append(evs, Event{Step: k, Kind: KindProbe, Count: len(p.Win), Mean: loss, Prev: p.Prev, NewLR: p.LR, Reason: "outlier"})
		p.On, p.Retry = false, false
		return evs, true, p.OK, true
	}
	if len(p.Win) < r.W && !last {
		return evs, false, 0, false
	}
	m, sd, n := summary(p.Win)
	accept := p.accepts(m, sd, n, r)
	evs = append(evs, Event{Step: k, Kind: KindProbe, Count: n, Mean: m, Prev: p.ref(r), Accept: accept, NewLR: p.LR})
	p.Win = p.Win[:0]
	if !accept && r.Retry && !p.Retry && n >= r.W && !last {
		// the first rejection at this rate, on its mean: one more window
		// (two outliers in a row, above, still end the probe at once)
		p.Retry = true
		evs[len(evs)-1].Reason = ReasonRetry
		return evs, false, 0, false
	}
	if accept {
		// the window's growth of ‖x‖² (all zero without ProbeNormCap)
		p.PrevG, p.LastG, p.WinX2 = p.LastG, p.X2-p.WinX2, p.X2
		p.OK, p.Prev, p.Sd, p.PN, p.LR, p.Retry = p.LR, m, sd, n, probeRaise*p.LR, false
		if r.Welch && (p.BestN < 2 || m < p.BestM) {
			p.BestM, p.BestSd, p.BestN = m, sd, n
		}
		if asked && !last {
			if !checked { // before the verdict, which stays the last event
				verdict := evs[len(evs)-1]
				evs = append(evs[:len(evs)-1], Event{Step: k, Kind: KindValidation, ValLoss: val, BestLoss: p.Val}, verdict)
			}
			p.Val = val
		}
	}
	if !accept || last {
		p.On, p.Retry = false, false
		return evs, true, p.OK, !accept && n >= r.W
	}
	return evs, false, 0, false
}

// capNext is [TailConfig.ProbeNormCap]'s test after an accepted window:
// the next window's growth of ‖x‖² projected as the last one's times the
// measured ratio of the last two, held to [1, 4], and whether it is more
// than ‖x_{k+1}‖². Without a ratio (the first accepted window, or either
// of the two not growing ‖x‖²) it caps nothing.
func (p *probeState) capNext() (next float64, capped bool) {
	if !(p.LastG > 0 && p.PrevG > 0) {
		return 0, false
	}
	next = min(probeRaise*probeRaise, max(1, p.LastG/p.PrevG)) * p.LastG
	return next, next > p.X2
}

// check validates a restored probe state.
func (p *probeState) check() error {
	if err := firstErr(checkNonNeg("TailState.Probe.LR", p.LR), checkNonNeg("TailState.Probe.OK", p.OK), checkNonNeg("TailState.Probe.Kept", p.Kept), checkNonNeg("TailState.Probe.Earlier", p.Earlier),
		checkNonNeg("TailState.Probe.Sd", p.Sd), checkIntMin("TailState.Probe.PN", p.PN, 0),
		checkNonNeg("TailState.Probe.BestSd", p.BestSd), checkIntMin("TailState.Probe.BestN", p.BestN, 0),
		checkNonNeg("TailState.Probe.GuardSd", p.GuardSd), checkIntMin("TailState.Probe.GuardN", p.GuardN, 0), checkNonNeg("TailState.Probe.GuardLR", p.GuardLR),
		checkIntMin("TailState.Probe.Hot", p.Hot, 0), checkIntMin("TailState.Probe.DecayHot", p.DecayHot, 0)); err != nil {
		return err
	}
	for _, r := range p.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return &FieldError{"TailState.Probe.Rates", r, "must be positive and finite"}
		}
	}
	for _, f := range append([]float64{p.Prev, p.Val, p.BestM, p.GuardM, p.LastG, p.PrevG}, p.Win...) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &FieldError{"TailState.Probe.Prev, .Val, .BestM, .GuardM, .LastG, .PrevG and .Win", f, "must be finite"}
		}
	}
	if err := firstErr(checkNonNeg("TailState.Probe.X2", p.X2), checkNonNeg("TailState.Probe.WinX2", p.WinX2)); err != nil {
		return err
	}
	return nil
}
