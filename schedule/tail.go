package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/salsaopt/salsa/stats"
)

// TailConfig is the end of a known budget that [Tail] adds to a statistical
// schedule: over the last D = max(1, round(Fraction·T)) of the budget's T
// steps, the rate decays linearly to zero (with Cuts, in two cuts ×0.1)
// from the one the schedule had reached at step T − D.
//
// The budget is the user's --epochs, not a tuned number; Fraction 0.2 is
// WSD's (Hägele et al. 2024), fixed for every task.
//
// With FromSwitch the decay begins earlier, when the inner scheduler reports
// that it switched (SALSA's switch from SSLS to SASA+: the SLOPE test found
// the loss no longer falling, or SASA+'s test found it stationary), and runs
// linearly to zero over all the rest of the budget; T − D stays the latest
// start, for an inner scheduler that never switches.
type TailConfig struct {
	Steps      int     // T ≥ 1: the budget, total optimizer steps
	Fraction   float64 // ∈ (0, 1]: the decay's share of the budget (0.2), at least
	FromSwitch bool    // begin the decay at the inner scheduler's switch
	Probe      bool    // with FromSwitch: run the rate probe between the switch and the decay (probe.go)
	ProbeEarly bool    // with Probe: start the probe after the warm-up's first W steps, or at the switch if that comes first; a probe ended by a failed rate (a rejected window, outliers) then decays from half the last accepted rate, the momentum zeroed
	// ProbeRollback, with Probe: the caller keeps the parameters at the start
	// of the probe and at the end of every accepted window whose last step
	// is not an outlier, and a failed rate puts them back
	// ([Result.Rollback]) with the momentum zeroed, so that the decay starts
	// from parameters the failed window has not moved. The copy at a
	// window's end is a candidate ([Result.Save]), kept ([Result.Confirm])
	// only when the next step's loss, the loss at the candidate, is not an
	// outlier; otherwise the copy before it stays, and an event says so
	// (Reason [ReasonCandidateOutlier]). An accepted window that ends on an
	// outlier makes no candidate, and its event says so (Reason
	// [ReasonEndsOnOutlier]). When the decay begins the copies are released
	// ([Result.Release]).
	ProbeRollback bool
	// ProbeSettle, with ProbeEarly: the early probe waits until the warm-up
	// has settled, that is until SSLS's rate has risen by less than the
	// probe's factor (×2) over the last W steps, so that the probe's
	// doubling, one per W steps, is the faster climb from then on. Without
	// it the probe starts after W steps whatever SSLS's rate is doing, and
	// from a small lr0 with a short budget the climb takes most of the
	// budget (held-out H10, docs/parity).
	ProbeSettle bool
	// ProbeRetry, with Probe: a rate whose window is rejected on its mean
	// gets one more window at the same rate, compared with the same
	// accepted window, and fails only if that one is rejected too (the
	// first window's event has Reason [ReasonRetry]). Two outliers in a row
	// still end the probe at once. A rate raised ×2 can raise the loss for
	// a few steps before it lowers it, and one window cannot tell that from
	// a rate that is too high: on held-out H19 a window at 31, where the
	// tuned rate is 100, was rejected for a mean of 3.39 against 3.35, and
	// the decay began from 7.7 (docs/parity). It is not in salsa-probe:
	// over ten seeds it raised the level where it was too low and where it
	// was already too high alike, and since each accepted window is the
	// next one's reference, a loss that crept up passed window by window
	// (a held-out cnn run sat at chance for two epochs).
	ProbeRetry bool
	// ProbeT, with Probe: the window test's quantile is Student's t with
	// n − 1 degrees of freedom, n the accepted window's length, instead of
	// the normal 1.645; σ̂ comes from those n losses, so at δ = 0.05 the
	// normal quantile rejects more often than δ when n is small (a window
	// of 5 steps on a budget of 100: 2.132). On held-out H65 (docs/parity)
	// a window at rate 18 was rejected by 0.0003 on a threshold of 0.0414
	// above a 5-step window's mean, and the decay began from 4.5 where the
	// tuned rate is 100. Screened over ten seeds (docs/parity/student.md),
	// it raised the level on the shortest budgets but brought no miss
	// within 2%, and on one run let a loss that was blowing up pass window
	// by window, each against the last; off in salsa-probe.
	ProbeT bool
	// ProbeWelch, with Probe: the window test is Welch's one-sided t-test
	// at δ = 0.05 (stats.WelchTest) of the window's losses against those
	// of the best accepted window, the one with the lowest mean (at first
	// the W steps before the probe), instead of the test against the last
	// accepted window with that window's σ̂ for both. A doubled rate makes
	// the loss noisier, and the test against the last window takes the
	// noisier window's variance to be the quieter one's: on the lstms whose
	// decay began too low, Welch's test would have passed 9–18 of the 15–26
	// windows each of H56, H65, H70 and H76 rejected on their mean over ten
	// seeds (on the mlps and logregs 0–2 of 14–30), and on held-out H65 the
	// rejected window at 19.3 had σ̂ 0.142 against the accepted one's 0.041
	// (docs/parity/welch.md). The best window as the reference keeps a loss
	// that creeps up from passing window by window, each against the last
	// (probe_t's failure, docs/parity/student.md). The outlier rule stays
	// against the last accepted window. Not with ProbeT, whose quantile it
	// replaces. Screened over ten seeds with WarmupShare 0.2, then alone
	// (docs/parity/welch.md), it failed on the lstms without weight decay:
	// there a doubled rate it accepts ends worse (H61, H66, H71). salsa
	// train's --set probe_welch_wd=1 turns it on only where the run's
	// weight decay is > 0, which passed the seen tasks from H55 on and
	// held-out H80–H84, then failed on a cnn with weight decay (H21: two
	// runs 5.6 and 7.5 points worse); off in salsa-probe.
	ProbeWelch bool
	// WarmupGuard, with Probe and ProbeRollback: the warm-up's line-search
	// losses are cut into windows of W steps (the probe's window) from
	// step 1; the first window, and each later one whose mean is the lowest
	// so far, is the warm-up's best, and the parameters at its end are kept
	// ([Result.Save], [Result.Confirm]) with SSLS's rate there. A window
	// whose mean Welch's one-sided test at δ = 0.05 (stats.WelchTest) finds
	// above the best one's ends the warm-up: the parameters go back to the
	// best window's ([Result.Rollback]), the momentum is zeroed, and the
	// decay begins from the rate kept with them (Reason
	// [ReasonWarmupRise]). On 16-example batches of a logistic regression
	// (held-out H84, docs/parity/guard.md) SSLS's Armijo test passed at
	// rates 10⁴ times the tuned one while the loss rose from 0.4 to
	// hundreds, and SALSA's SLOPE test, which waits for N_min losses, never
	// ran. On in salsa-probe since its rule passed (steps 1–4 of
	// guard.md); salsa-probe runs recorded before that have it off, and
	// [Build] replays them so.
	WarmupGuard bool
	// ProbeVal, with Probe: two outliers in a row end the probe only when
	// the validation loss at that step is above the one at the last
	// accepted point, the probe's start or the end of the last window
	// accepted with the probe going on; otherwise they are overruled
	// (Reason [ReasonOverruled]) and the probe goes on. The caller reports
	// the validation loss when End asks for it ([Result.NeedVal]): at those
	// points and at second outliers, a few times per probe. A training-loss
	// plateau makes the accepted window's σ̂ small, and a rate that breaks
	// out of it gives outliers that are not a divergence (held-out H27,
	// docs/parity).
	ProbeVal bool
	// ProbeKeepRate, with ProbeEarly and ProbeRollback: a probe ended by a
	// failed rate decays from the rate that reached the copy the rollback
	// puts back, not from half the last accepted rate (the momentum is
	// zeroed all the same). That is the last accepted rate when the next
	// loss confirmed its window's copy, and an earlier one when it did not
	// or when the window ended on an outlier: decaying from the last
	// accepted rate in that case diverged on the cnn (docs/parity/keep-rate.md).
	// The back-off came before the copy was confirmed: without it a
	// held-out cnn run diverged after a rollback (docs/parity), and a copy
	// its last update had ruined is the fault the confirmation was made for.
	// With ProbeNormCap a probe the cap ends decays as without this key
	// (from half the last accepted rate): it puts no copy back, and the
	// key raises only the level after a failed rate (docs/parity/keep-cap.md).
	ProbeKeepRate bool
	// ProbeBackoff, with ProbeEarly: a probe ended by a failed rate decays
	// from the last accepted rate divided by this; 0 means the probe's own
	// raise, 2, salsa-probe's. On the lstms trained without weight decay
	// the runs that decayed from higher ended worse; 4, screened on the
	// tasks without weight decay (docs/parity/backoff.md), brought three
	// overfitting lstms closer to the tuned schedule but none within 2%,
	// and lowered an lstm, a cnn and an mlp that wanted the higher level.
	// Not with ProbeKeepRate, which decays from the copy's rate instead.
	ProbeBackoff float64
	// ProbeLevelCopy, with ProbeEarly and ProbeRollback: a probe ended by a
	// failed rate puts back a copy reached at a rate no higher than the
	// level the decay begins from, half the last accepted rate: the caller
	// keeps the copy before the kept one too ([Result.KeepEarlier]), and
	// when the kept copy was reached above the level the rollback puts
	// back that earlier one ([Result.RollbackEarlier]; the decay event's
	// Reason is [ReasonRollbackToLevel]). A probe whose first window fails
	// has no earlier copy and puts back the start's, as without the key.
	// Without it the decay starts from parameters trained for a window at
	// twice its level. Screened over ten seeds (docs/parity/climb.md),
	// leaving that window out helped the lstms trained without weight
	// decay and cost those trained with it and the mlps without it, so it
	// is off in salsa-probe. Not with ProbeKeepRate, whose level is the
	// kept copy's rate, nor with a ProbeBackoff other than 2: one earlier
	// copy reaches half the last accepted rate only.
	ProbeLevelCopy bool
	// ProbeNormCap, with Probe: after an accepted window, the probe ends
	// if the next window, at twice the rate, is projected to grow ‖x‖² by
	// more than ‖x‖² is now (to more than double it). The projection is
	// the accepted window's growth of ‖x‖² times the measured ratio of the
	// last two accepted windows' growth, held to [1, 4] (a step's growth,
	// −2α⟨x_{k+1}, d⟩ − α²‖d‖², goes at most as α²); without a ratio (the
	// first accepted window, or either of the two not growing ‖x‖²) it
	// caps nothing, so a model that starts at zero, whose ‖x‖² is only its
	// growth so far, is not capped on an assumed ratio. The decay then
	// begins as after a failed rate (with ProbeEarly from half the last
	// accepted rate, the momentum zeroed) but from the parameters the
	// accepted window reached, with no rollback; the events' Reason is
	// [ReasonNormCap]. The caller reports ‖x_{k+1}‖² in each step's
	// [Observation.X2] until the decay begins ([NormAsker]). On the lstms
	// trained without weight decay the climb to rates whose windows
	// doubled ‖x‖² cost perplexity at any level of the decay. Screened
	// from lr0 1e-2 (docs/parity/norm.md), the cap took held-out H91 from
	// 21% worse than the tuned schedule to 4% better over ten seeds, and
	// four other overfitting lstms within 2% of it over three. Its rule,
	// judged against the tuned schedule on 27 screened pairs of task and
	// lr0 and on held-out H95–H99 over ten seeds, held, and salsa-probe
	// has it on; its runs recorded before that have it off, and [Build]
	// replays them so. Not with ProbeLevelCopy, whose copy is that of a
	// rollback the cap does not make; with ProbeKeepRate the cap's decay
	// still begins from half the last accepted rate.
	ProbeNormCap bool
	// ProbeCapConfirm, with ProbeNormCap and ProbeRollback: the loss of
	// the step after the cap, the first of the decay, is the loss at the
	// parameters the decay began from, and confirms them as a candidate
	// copy's loss does; when it is an outlier against the capped window
	// (more than 4σ̂ above its mean), the caller puts back the kept copy,
	// the momentum zeroed ([Result.Rollback]; the [KindProbe] event's
	// Reason is [ReasonCapOutlier]) and the decay goes on at its rate. The
	// copies are released a step later than without it. Without it the cap
	// decays from parameters no loss has checked: on a held-out cnn (H17,
	// lr0 1e-2, seed 8) the last update of the capped window had already
	// blown the loss up from 1.3 to 10.4, and the decay from there diverged
	// (docs/parity/keep-cap.md). Over every capped run here the loss after
	// the cap is an outlier in two runs of some 170; in the other, a
	// held-out lstm (H96, lr0 1e-2, seed 1), the rollback cost 4.0% of
	// perplexity, so by its rule it is off in salsa-probe.
	ProbeCapConfirm bool
	// DecayGuard, with Probe: during the decay after the probe, two losses
	// in a row that are outliers against the probe's last accepted window
	// (more than 4σ̂ above its mean, the probe's own test) halve the
	// decay's line, every later rate, and zero the momentum; the
	// [KindProbe] event's Reason is [ReasonDecayGuard]. Without an
	// accepted window of two losses or more there is nothing to compare
	// with, and it does nothing. Without it a held-out cnn run (H17, lr0
	// 1e-2, seed 9) decayed for forty steps from a rate its next loss had
	// confirmed and then diverged (docs/parity/keep-cap.md); over the
	// decays of the runs here it would have fired in the two H17 runs that
	// diverged and in no other run of salsa-probe. Its rule, written before
	// its runs, held, and salsa-probe has it on; its runs recorded before
	// have it off, and [Build] replays them so.
	DecayGuard bool
	// Cuts: the decay has the shape of the hand schedule instead
	// of the line to zero: over its n = T − s steps the rate is α_s for the
	// first third, α_s/10 for the second and α_s/100 for the last (step
	// i = 0 … n−1 of the decay at α_s·0.1^⌊3i/n⌋). Screened on twenty
	// tasks (docs/parity/cuts.md), it fixed no lstm, turned two into
	// misses and cost every cnn 1.7–2.9 points: the line to zero carries
	// much of salsa-probe's margin there, so it is off in salsa-probe.
	Cuts bool
	// Average: from the step s the decay begins, the caller keeps the
	// uniform average x̄ of the iterates x_{s+1} … x_{T+1}
	// ([Result.Average]) and, at the end of the budget, evaluates the
	// validation split at x̄ and at the last iterate, cell by cell, and
	// gives the paired differences to [Tail.PickAverage], which keeps x̄
	// only if a one-sided paired test at δ = [AverageDelta] says it is
	// better in the validation metric (cross-entropy on a text, accuracy on
	// images). Polyak–Ruppert averaging of the annealing phase: on the
	// lstms trained without weight decay x̄ was 8% lower in perplexity than
	// the last iterate, and on those with weight decay, and on images, worse;
	// the test kept it in 18 of 140 screened runs, never where it ended
	// worse on the test split (docs/parity/average.md). A caller that
	// cannot keep the average or evaluate the cells must refuse such a
	// scheduler ([Tail.Averages]) rather than ignore it.
	Average bool
	// WarmupShare s ∈ [0, 1), 0 off: SSLS's smoothing γ = √(b/n) is raised
	// where it would not let the warm-up's rate climb ×[WarmupRange] within
	// the first s of the budget, to γ_T = min(1, WarmupRange^(1/(s·T)) − 1)
	// ([TailConfig.WarmupGamma]); γ ≥ γ_T is left as it is. SSLS's rate
	// rises by at most 1 + γ a step, and on a short budget with few steps
	// an epoch the climb from lr0 1e-3 took 40–49% of it (held-out H65 and
	// H70, docs/parity/budget-warmup.md). [Config.ForMethod] applies it, so
	// that a run records the γ it ran with. Off in salsa-probe.
	WarmupShare float64
}

// WarmupRange is the factor [TailConfig.WarmupShare] lets the warm-up climb
// within its share of the budget: 10⁴, from the smallest lr0 of issue 9's
// (10⁻³) to the tuned rates of its lstms (10–300) on the 1-3-10 grid.
const WarmupRange = 1e4

// WarmupGamma is SSLS's smoothing γ under c: γ, or with WarmupShare s > 0
// and a budget T ≥ 1, max(γ, γ_T), γ_T = min(1, WarmupRange^(1/(s·T)) − 1).
func (c TailConfig) WarmupGamma(gamma float64) float64 {
	if !(c.WarmupShare > 0) || c.Steps < 1 {
		return gamma
	}
	gt := math.Expm1(math.Log(WarmupRange) / (c.WarmupShare * float64(c.Steps)))
	return max(gamma, min(1, gt))
}

// WithProbe is c with the rate probe on, started early once SSLS has
// settled, with the rollback, and with the average of the decay's iterates
// picked by a test, with the warm-up's guard and with the cap on the
// probe's climb relative to ‖x‖², and with the guard in the decay: Probe,
// ProbeEarly, ProbeRollback, ProbeSettle, Average, WarmupGuard, ProbeNormCap
// and DecayGuard. It is the Tail of
// the method "salsa-probe", the variant of salsa-budget that docs/parity
// measured closest to a grid-tuned schedule; FromSwitch stays c's (the
// probe needs it, and Validate says so), and so do ProbeKeepRate and
// ProbeCapConfirm, off in salsa-probe, and ProbeLevelCopy, which Validate
// refuses beside the cap.
func (c TailConfig) WithProbe() TailConfig {
	c = c.probeSwitches()
	c.WarmupGuard, c.ProbeNormCap, c.DecayGuard = true, true, true
	return c
}

// probeSwitches is c with the five switches salsa-probe has had on since
// it was built: Probe, ProbeEarly, ProbeRollback, ProbeSettle and Average.
func (c TailConfig) probeSwitches() TailConfig {
	c.Probe, c.ProbeEarly, c.ProbeRollback, c.ProbeSettle, c.Average = true, true, true, true, true
	return c
}

// Switcher is a scheduler that switches phase once, as SALSA does; [Tail]
// with FromSwitch begins its decay there.
type Switcher interface {
	Switched() (switched bool, reason string, step int)
}

// decaySteps is D.
func (c TailConfig) decaySteps() int { return decayLen(c.Fraction, c.Steps) }

// Validate reports the first invalid field.
func (c TailConfig) Validate() error {
	if err := firstErr(checkIntMin("TailConfig.Steps", c.Steps, 1), checkTheta("TailConfig.Fraction", c.Fraction)); err != nil {
		return err
	}
	if !(c.WarmupShare >= 0 && c.WarmupShare < 1) {
		return &FieldError{"TailConfig.WarmupShare", c.WarmupShare, "must be in [0, 1) (0: off)"}
	}
	if c.Probe && !c.FromSwitch {
		return &FieldError{"TailConfig.Probe", c.Probe, "needs FromSwitch (--set decay_from_switch=1): the probe runs from the switch to the decay"}
	}
	if c.ProbeEarly && !c.Probe {
		return &FieldError{"TailConfig.ProbeEarly", c.ProbeEarly, "needs Probe (--set probe=1)"}
	}
	if c.ProbeRollback && !c.Probe {
		return &FieldError{"TailConfig.ProbeRollback", c.ProbeRollback, "needs Probe (--set probe=1)"}
	}
	if c.ProbeSettle && !c.ProbeEarly {
		return &FieldError{"TailConfig.ProbeSettle", c.ProbeSettle, "needs ProbeEarly (--set probe_early=1)"}
	}
	if c.ProbeRetry && !c.Probe {
		return &FieldError{"TailConfig.ProbeRetry", c.ProbeRetry, "needs Probe (--set probe=1)"}
	}
	if c.ProbeT && !c.Probe {
		return &FieldError{"TailConfig.ProbeT", c.ProbeT, "needs Probe (--set probe=1; salsa-probe has it)"}
	}
	if c.ProbeWelch {
		switch {
		case !c.Probe:
			return &FieldError{"TailConfig.ProbeWelch", c.ProbeWelch, "needs Probe (--set probe=1; salsa-probe has it)"}
		case c.ProbeT:
			return &FieldError{"TailConfig.ProbeWelch", c.ProbeWelch, "not with ProbeT (--set probe_t=1): Welch's test has its own degrees of freedom"}
		}
	}
	if c.WarmupGuard && !(c.Probe && c.ProbeRollback) {
		return &FieldError{"TailConfig.WarmupGuard", c.WarmupGuard, "needs Probe and ProbeRollback (--set probe=1 --set probe_rollback=1; salsa-probe has them): it keeps the parameters of the warm-up's best window to go back to"}
	}
	if c.ProbeVal && !c.Probe {
		return &FieldError{"TailConfig.ProbeVal", c.ProbeVal, "needs Probe (--set probe=1)"}
	}
	if c.ProbeKeepRate && !(c.ProbeEarly && c.ProbeRollback) {
		return &FieldError{"TailConfig.ProbeKeepRate", c.ProbeKeepRate, "needs ProbeEarly and ProbeRollback (--set probe_early=1, probe_rollback=1; salsa-probe has both): without the early probe the decay already begins from the last accepted rate"}
	}
	if c.ProbeLevelCopy {
		switch {
		case !(c.ProbeEarly && c.ProbeRollback):
			return &FieldError{"TailConfig.ProbeLevelCopy", c.ProbeLevelCopy, "needs ProbeEarly and ProbeRollback (--set probe_early=1, probe_rollback=1; salsa-probe has both)"}
		case c.ProbeKeepRate:
			return &FieldError{"TailConfig.ProbeLevelCopy", c.ProbeLevelCopy, "not with ProbeKeepRate (--set probe_keep_rate=1), which decays from the rate of the copy put back"}
		case c.ProbeBackoff != 0 && c.ProbeBackoff != probeRaise:
			return &FieldError{"TailConfig.ProbeLevelCopy", c.ProbeLevelCopy, fmt.Sprintf("not with ProbeBackoff %v (--set probe_backoff): the one earlier copy reaches the level of the back-off of %v only", c.ProbeBackoff, probeRaise)}
		}
	}
	if c.ProbeNormCap {
		switch {
		case !c.Probe:
			return &FieldError{"TailConfig.ProbeNormCap", c.ProbeNormCap, "needs Probe (--set probe=1; salsa-probe has it)"}
		case c.ProbeLevelCopy:
			return &FieldError{"TailConfig.ProbeNormCap", c.ProbeNormCap, "not with ProbeLevelCopy (--set probe_level_copy=1): the cap ends the probe without the rollback that puts back the level's copy"}
		}
	}
	if c.DecayGuard && !c.Probe {
		return &FieldError{"TailConfig.DecayGuard", c.DecayGuard, "needs Probe (--set probe=1; salsa-probe has it): its reference is the probe's last accepted window"}
	}
	if c.ProbeCapConfirm && !(c.ProbeNormCap && c.ProbeRollback) {
		return &FieldError{"TailConfig.ProbeCapConfirm", c.ProbeCapConfirm, "needs ProbeNormCap and ProbeRollback (--set probe_norm_cap=1, probe_rollback=1; salsa-probe has both): it checks the parameters the cap decays from against the copy the rollback keeps"}
	}
	if c.ProbeBackoff != 0 {
		if !validBackoff(c.ProbeBackoff) {
			return &FieldError{"TailConfig.ProbeBackoff", c.ProbeBackoff, "must be finite and ≥ 1 (0: the probe's raise, 2)"}
		}
		if !c.ProbeEarly {
			return &FieldError{"TailConfig.ProbeBackoff", c.ProbeBackoff, "needs ProbeEarly (--set probe_early=1; salsa-probe has it): without the early probe the decay begins from the last accepted rate"}
		}
		if c.ProbeKeepRate {
			return &FieldError{"TailConfig.ProbeBackoff", c.ProbeBackoff, "not with ProbeKeepRate (--set probe_keep_rate=1), which decays from the rate of the copy put back"}
		}
	}
	return nil
}

// validBackoff reports whether b is a ProbeBackoff other than the zero
// value's default: finite and ≥ 1.
func validBackoff(b float64) bool { return b >= 1 && !math.IsInf(b, 0) }

// backoff is the factor a failed early probe's last accepted rate is
// divided by: ProbeBackoff, or the probe's raise.
func (c TailConfig) backoff() float64 {
	if c.ProbeBackoff != 0 {
		return c.ProbeBackoff
	}
	return probeRaise
}

// Tail is a statistical schedule that knows its budget: until step s it is
// the inner scheduler (SALSA for the method "salsa-budget": the SSLS warm-up,
// the switch, SASA+'s drops); from step s + 1 on the rate is
//
//	α_k = α_s·(1 − (k − s − 1)/(T − s)),   s < k ≤ T,
//
// with α_s the inner scheduler's rate after step s, and α_T past the budget
// (with [TailConfig.Cuts], α_s·0.1^⌊3(k − s − 1)/(T − s)⌋ instead).
// s is T − D, or with FromSwitch the switch step when that comes first.
// The tail runs no line search and no test: the decay anneals the noise of
// the last phase whatever α_s is. At step s it emits a [KindDecay] event.
type Tail struct {
	cfg   TailConfig
	opt   options
	inner Scheduler
	st    stepper    // used once the tail has begun
	start float64    // α_s; 0 before the tail
	begin int        // s: the last step before the decay, once it has begun
	probe probeState // with Probe
	pend  float64    // before the switch, with Probe: f(x_k) of the open step
	wait  valWait    // with ProbeVal: End asked for the validation loss
}

// valWait is a step whose End asked for the validation loss
// ([Result.NeedVal]) and whose decisions wait for [Tail.ReportVal]: the
// probe's start (res is the step's Result without the validation loss's
// event), or a step of the probe (loss and lr are its own; the tail's
// stepper has counted it).
type valWait struct {
	on, start bool
	res       Result
	loss, lr  float64
}

// NewTail wraps inner, which must be at step 0.
func NewTail(cfg TailConfig, inner Scheduler, opts ...Option) (*Tail, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if inner == nil {
		return nil, errors.New("schedule: NewTail: inner scheduler is nil")
	}
	if inner.Step() != 0 {
		return nil, fmt.Errorf("schedule: NewTail: inner scheduler at step %d: must be at step 0", inner.Step())
	}
	if _, ok := inner.(Switcher); cfg.FromSwitch && !ok {
		return nil, fmt.Errorf("schedule: NewTail: TailConfig.FromSwitch: %s never switches", inner.Name())
	}
	t := &Tail{cfg: cfg, opt: buildOptions(opts), inner: inner}
	t.maybeBegin()
	return t, nil
}

// Name is the inner scheduler's name with "-budget" ("salsa-budget"), or
// with "-probe" when the probe's four switches and Average are on
// ("salsa-probe", whichever way they were set, with the warm-up guard and
// the cap as [TailConfig.WithProbe] has them or without, as salsa-probe's
// runs recorded before they joined it).
func (t *Tail) Name() string {
	if t.cfg == t.cfg.probeSwitches() {
		return t.inner.Name() + "-probe"
	}
	return t.inner.Name() + "-budget"
}

// Config returns the configuration.
func (t *Tail) Config() TailConfig { return t.cfg }

// Inner returns the scheduler the tail wraps; between steps before the
// tail it is the one deciding.
func (t *Tail) Inner() Scheduler { return t.inner }

// Decaying reports whether the tail has begun, and the rate α_s it decays
// from.
func (t *Tail) Decaying() (bool, float64) { return t.start > 0, t.start }

func (t *Tail) setOptions(o options) {
	t.opt = o
	if in, ok := t.inner.(interface{ setOptions(options) }); ok {
		in.setOptions(o)
	}
}

// tailStart is T − D, the last step of the inner scheduler.
func (t *Tail) tailStart() int { return t.cfg.Steps - t.cfg.decaySteps() }

// maybeBegin starts the tail when the inner scheduler has made T − D steps
// (at once for T − D = 0) or, with FromSwitch, has switched (with Probe and
// before T − D: the probe instead, or with ProbeEarly after W steps, with
// ProbeSettle once the warm-up's rate has settled); it reports whether the
// decay began.
func (t *Tail) maybeBegin() bool {
	if t.start > 0 {
		return false
	}
	k, w := t.inner.Step(), t.cfg.probeWindow()
	if t.cfg.ProbeSettle {
		t.probe.rate(t.inner.LR(), w)
	}
	switched := false
	if sw, ok := t.inner.(Switcher); ok && t.cfg.FromSwitch {
		switched, _, _ = sw.Switched()
	}
	early := t.cfg.ProbeEarly && k >= w
	if early && t.cfg.ProbeSettle {
		early = t.probe.settled(w)
	}
	switched = switched || early
	if k < t.tailStart() && !switched {
		return false
	}
	t.st = stepper{k: k}
	if switched && t.cfg.Probe && k < t.tailStart() {
		t.probe.start(t.inner.LR(), t.cfg.ProbeWelch)
		return false
	}
	t.start, t.begin = t.inner.LR(), min(k, t.cfg.Steps-1)
	return true
}

// guard runs [TailConfig.WarmupGuard]'s test at the end of a warm-up
// window, step res.Step a multiple of W before T − D: a window above the
// best one ends the warm-up and begins the decay, reporting true, with the
// rollback in res (End adds the decay's event); a new best window asks for
// its parameters to be kept.
func (t *Tail) guard(res *Result) bool {
	k, w := res.Step, t.cfg.probeWindow()
	if k%w != 0 || k >= t.tailStart() {
		return false
	}
	p := &t.probe
	m, sd, n := summary(p.Win)
	if p.guardRises(m, sd, n) {
		t.st = stepper{k: k}
		t.start, t.begin = p.GuardLR, min(k, t.cfg.Steps-1)
		*p = probeState{} // the warm-up's windows are done with
		res.Rollback, res.ResetMomentum, res.Release = true, true, true
		return true
	}
	if n >= 2 && (p.GuardN == 0 || m < p.GuardM) {
		p.GuardM, p.GuardSd, p.GuardN, p.GuardLR = m, sd, n, t.inner.LR()
		res.Save, res.Confirm = true, true
	}
	return false
}

// deciding reports whether the inner scheduler takes the next step's
// decisions: neither the probe nor the decay has begun.
func (t *Tail) deciding() bool { return t.start == 0 && !t.probe.On }

// lrAt is α_k in the tail, 1-based: linear from α_s at step s+1 towards 0
// at step T+1, or with Cuts α_s cut ×0.1 after each third of the decay.
func (t *Tail) lrAt(k int) float64 {
	k = min(k, t.cfg.Steps)
	i, n := k-t.begin-1, t.cfg.Steps-t.begin
	if t.cfg.Cuts {
		return t.start * math.Pow(decayCut, float64(3*i/n))
	}
	return t.start * (1 - float64(i)/float64(n))
}

// decayCut is the factor of each of the two cuts of TailConfig.Cuts: the
// issue's hand schedule's.
const decayCut = 0.1

// Step is the number of completed steps.
func (t *Tail) Step() int {
	if t.start > 0 || t.probe.On {
		return t.st.k
	}
	return t.inner.Step()
}

// LR is the rate the next step starts from.
func (t *Tail) LR() float64 {
	if t.start > 0 {
		return t.lrAt(t.st.k + 1)
	}
	if t.probe.On {
		return t.probe.LR
	}
	return t.inner.LR()
}

// Averages reports whether the caller keeps the average of the decay's
// iterates and picks it at the end of the budget ([TailConfig.Average]).
func (t *Tail) Averages() bool { return t.cfg.Average }

// AverageDelta is δ of [Tail.PickAverage]'s test: the project's default
// level for its tests (SASA+'s and SLOPE's δ).
const AverageDelta = 0.05

// PickAverage decides, at the end of the budget, between the average x̄ of
// the decay's iterates ([TailConfig.Average]) and the last iterate. gain
// holds, for each cell of the validation split, how much better x̄ does
// there than the last iterate (on a text: the last iterate's mean
// cross-entropy on one stream's chunk minus x̄'s; on images: 1 where only
// x̄ classifies an example right, −1 where only the last iterate does, 0
// otherwise); metric names them ("loss" or "accuracy"). x̄ is kept when a
// one-sided paired z-test at δ = [AverageDelta] says the mean gain is
// positive (stats.PairedZTest). It returns the KindAverage event, whose
// Accept says x̄ is kept; it is an error before the decay, without
// Average, or with fewer than two finite gains.
func (t *Tail) PickAverage(gain []float64, metric string) (Event, error) {
	if !t.cfg.Average {
		return Event{}, fmt.Errorf("%w: PickAverage: TailConfig.Average is off", ErrPhase)
	}
	if t.start == 0 {
		return Event{}, fmt.Errorf("%w: PickAverage at step %d: the decay has not begun, there is no average", ErrPhase, t.Step())
	}
	if err := t.waiting("PickAverage"); err != nil {
		return Event{}, err
	}
	r, err := stats.PairedZTest(gain, AverageDelta)
	if err != nil {
		return Event{}, fmt.Errorf("schedule: PickAverage at step %d: %w", t.Step(), err)
	}
	ev := Event{Step: t.Step(), Kind: KindAverage, Count: r.N, Mean: r.Mean, Std: r.Std, Z: r.Z, Accept: r.Positive, Reason: metric}
	t.opt.emit(t.Name(), []Event{ev})
	return ev, nil
}

// AsksVal reports whether End may ask for the validation loss: with
// [TailConfig.ProbeVal].
func (t *Tail) AsksVal() bool { return t.cfg.ProbeVal }

// AsksNorm reports whether the next End reads ‖x_{k+1}‖²
// ([Observation.X2]): with [TailConfig.ProbeNormCap], until the decay
// begins (the probe reads it; the decay does not). A caller that does not
// measure it refuses such a scheduler before its first step.
func (t *Tail) AsksNorm() bool { return t.cfg.ProbeNormCap && t.start == 0 }

// RollsBack reports whether End may ask the caller to copy the parameters
// and put them back ([Result.Save], [Result.Rollback]): with
// [TailConfig.ProbeRollback]. A caller that cannot refuses such a
// scheduler before its first step.
func (t *Tail) RollsBack() bool { return t.cfg.ProbeRollback }

// waiting returns an error while a step waits for its validation loss.
func (t *Tail) waiting(what string) error {
	if t.wait.on {
		return fmt.Errorf("%w: %s while step %d waits for its validation loss (call ReportVal)", ErrPhase, what, t.Step())
	}
	return nil
}

// Searching reports whether the next step runs a line search.
func (t *Tail) Searching() bool { return t.deciding() && t.inner.Searching() }

// Begin opens a step.
func (t *Tail) Begin(loss, gd float64) (Request, error) {
	if err := t.waiting("Begin"); err != nil {
		return Request{}, err
	}
	if t.deciding() {
		req, err := t.inner.Begin(loss, gd)
		if err != nil {
			return req, err
		}
		t.pend = loss
		return req, nil
	}
	if err := t.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	if t.probe.On {
		t.probe.add(loss, t.cfg.probeWindow())
	}
	return Request{LR: t.LR()}, nil
}

// Trial reports a line-search evaluation.
func (t *Tail) Trial(f float64) (Request, error) {
	if t.deciding() {
		return t.inner.Trial(f)
	}
	return Request{}, noTrial(t.st.k + 1)
}

// Abort discards the open step. A step whose End asked for the validation
// loss is over: Abort leaves it waiting.
func (t *Tail) Abort() {
	if t.wait.on {
		return
	}
	if t.deciding() {
		t.inner.Abort()
		return
	}
	if t.probe.On && t.st.open {
		t.probe.drop()
	}
	t.st.abort()
}

// End closes the step; at step T − D the tail begins.
func (t *Tail) End(obs Observation) (Result, error) {
	if err := t.waiting("End"); err != nil {
		return Result{}, err
	}
	if t.AsksNorm() {
		if err := checkX2(t.Step()+1, obs.X2); err != nil {
			return Result{}, err
		}
	}
	if t.deciding() {
		res, err := t.inner.End(obs)
		if err != nil {
			return res, err
		}
		if t.cfg.Probe {
			t.probe.add(t.pend, t.cfg.probeWindow())
		}
		reason := ""
		switch {
		case t.cfg.WarmupGuard && t.guard(&res):
			reason = ReasonWarmupRise
		case t.maybeBegin():
			reason = "budget"
		}
		if reason != "" {
			ev := Event{Step: res.Step, Kind: KindDecay, NewLR: t.start, Reason: reason}
			res.Events = append(res.Events, ev)
			res.NextLR = t.LR()
			res.Average = t.cfg.Average
			t.opt.emit(t.Name(), []Event{ev})
		}
		if t.probe.On {
			p := t.probe
			ev := Event{Step: res.Step, Kind: KindProbe, Count: p.PN, Mean: p.Prev, Prev: p.Prev, Accept: true, NewLR: p.LR, Reason: "start"}
			res.Events = append(res.Events, ev)
			res.NextLR = t.LR()
			// the warm-up's parameters, at a rate the line search accepted:
			// kept at once
			res.Save, res.Confirm = t.cfg.ProbeRollback, t.cfg.ProbeRollback
			if t.cfg.ProbeNormCap {
				// the first window's growth of ‖x‖² is counted from here
				t.probe.X2, t.probe.WinX2 = obs.X2, obs.X2
			}
			if t.cfg.ProbeVal {
				// the reference of the first outliers: the validation loss
				// here
				t.wait = valWait{on: true, start: true, res: res}
				return Result{Step: res.Step, LR: res.LR, NeedVal: true}, nil
			}
			t.opt.emit(t.Name(), []Event{ev})
		}
		return res, nil
	}
	lr := t.LR()
	if _, err := t.st.checkEnd(obs, lr); err != nil {
		return Result{}, err
	}
	loss := t.st.loss
	k := t.st.commit()
	if t.probe.On && t.cfg.ProbeNormCap {
		t.probe.X2 = obs.X2
	}
	if t.probe.On && t.cfg.ProbeVal && t.probe.asks(loss, t.cfg.probeRule(), k >= t.tailStart()) {
		t.wait = valWait{on: true, loss: loss, lr: lr}
		return Result{Step: k, LR: lr, NeedVal: true}, nil
	}
	return t.close(k, loss, lr, 0, false), nil
}

// ReportVal reports the validation loss at x_{k+1} that the last End asked
// for ([Result.NeedVal]) and returns step k's Result.
func (t *Tail) ReportVal(loss float64) (Result, error) {
	if !t.wait.on {
		return Result{}, fmt.Errorf("%w: ReportVal after step %d: no validation loss was asked for", ErrPhase, t.Step())
	}
	k := t.Step()
	if err := finite("validation loss", k, loss); err != nil {
		return Result{}, err
	}
	w := t.wait
	t.wait = valWait{}
	if !w.start {
		return t.close(k, w.loss, w.lr, loss, true), nil
	}
	t.probe.Val = loss
	res := w.res
	ev := Event{Step: k, Kind: KindValidation, ValLoss: loss, BestLoss: math.Inf(1)}
	res.Events = append(res.Events[:len(res.Events):len(res.Events)], ev)
	t.opt.emit(t.Name(), res.Events[len(res.Events)-2:])
	return res, nil
}

// close makes the decisions of step k of the probe or the decay, whose
// mini-batch loss was loss at the rate lr; asked says that val is the
// validation loss at the step's parameters, which the probe asked for.
func (t *Tail) close(k int, loss, lr, val float64, asked bool) Result {
	res := Result{Step: k, LR: lr}
	if t.probe.CapCheck {
		// the first step of a decay the cap began: this loss is at the
		// parameters it began from; an outlier puts back the kept copy
		t.probe.CapCheck, res.Release = false, true
		if t.probe.outlier(loss) {
			res.Rollback, res.ResetMomentum = true, true
			res.Events = []Event{{Step: k, Kind: KindProbe, Count: 1, Mean: loss, Prev: t.probe.Prev, NewLR: lr, Reason: ReasonCapOutlier}}
			t.opt.emit(t.Name(), res.Events)
		}
	} else if t.cfg.DecayGuard && t.start > 0 {
		// the decay, from its second step: two outliers in a row halve it
		if !t.probe.outlier(loss) {
			t.probe.DecayHot = 0
		} else if t.probe.DecayHot++; t.probe.DecayHot >= probeHot {
			t.probe.DecayHot, t.start = 0, t.start/2
			res.ResetMomentum = true
			res.Events = []Event{{Step: k, Kind: KindProbe, Count: probeHot, Mean: loss, Prev: t.probe.Prev, NewLR: t.lrAt(k + 1), Reason: ReasonDecayGuard}}
			t.opt.emit(t.Name(), res.Events)
		}
	}
	if t.probe.On {
		cand, rate := t.probe.Cand, t.probe.OK
		evs, done, from, failed := t.probe.end(k, loss, t.cfg.probeRule(), k >= t.tailStart(), val, asked)
		if cand {
			// this step's loss is the loss at the candidate copy: keep it
			// unless it is an outlier (docs/parity: an H17 run diverged
			// after a rollback to a copy whose own loss was 10.37)
			t.probe.Cand = false
			if t.probe.Hot == 0 {
				if t.cfg.ProbeLevelCopy {
					// the kept copy stays, as the earlier one
					res.KeepEarlier, t.probe.Earlier = true, t.probe.Kept
				}
				res.Confirm, t.probe.Kept = true, rate
			} else {
				ev := Event{Step: k, Kind: KindProbe, Count: 1, Mean: loss, Prev: t.probe.Prev, Accept: true, NewLR: rate,
					Reason: ReasonCandidateOutlier}
				evs = append([]Event{ev}, evs...)
			}
		}
		// a window accepted at this step, and the probe goes on: keep the
		// parameters its rate reached as a candidate, to roll back to should
		// the next fail, unless its last step is an outlier: those
		// parameters may already be leaving the stable region, so the copy
		// of the last window that ended clean stays (docs/parity: an H5 run
		// collapsed to chance after a rollback to such a copy)
		if w := len(evs) - 1; t.cfg.ProbeRollback && !done && w >= 0 && evs[w].Accept && evs[w].Reason == "" {
			if t.probe.Hot == 0 {
				res.Save, t.probe.Cand = true, true
			} else {
				evs[w].Reason = ReasonEndsOnOutlier
			}
		}
		capped := false
		if w := len(evs) - 1; t.cfg.ProbeNormCap && !done && w >= 0 && evs[w].Accept && evs[w].Kind == KindProbe {
			if next, ok := t.probe.capNext(); ok {
				// the next window would more than double ‖x‖²: the probe
				// ends here, as if the next rate had failed, at the
				// parameters this window reached; no rollback follows, so
				// its candidate copy is not made
				evs = append(evs, Event{Step: k, Kind: KindProbe, Mean: next, Prev: t.probe.X2, NewLR: t.probe.LR, Reason: ReasonNormCap})
				done, from, failed, capped = true, t.probe.OK, true, true
				t.probe.On, t.probe.Retry, t.probe.Cand, res.Save = false, false, false, false
				t.probe.CapCheck = t.cfg.ProbeCapConfirm
			}
		}
		if done {
			if t.cfg.ProbeEarly && failed {
				// early, the accepted windows' losses were still falling, so
				// the last accepted rate may be at the edge of stability: back
				// off one level (ProbeBackoff's), and drop the momentum of the
				// failed window; with ProbeKeepRate, decay from the rate that
				// reached the copy the rollback puts back (the cap puts none
				// back, and backs off)
				if t.cfg.ProbeKeepRate && !capped {
					from = t.probe.Kept
				} else {
					from /= t.cfg.backoff()
				}
				res.ResetMomentum = true
			}
			reason := "probe"
			// no rollback after the probe (after the cap's check, with
			// ProbeCapConfirm): the caller can free its copy
			res.Release = t.cfg.ProbeRollback && !t.probe.CapCheck
			if capped {
				reason = ReasonNormCap
			} else if t.cfg.ProbeRollback && failed {
				// back to the parameters of the last accepted window
				res.Rollback, res.ResetMomentum, reason = true, true, "rollback"
				if t.cfg.ProbeLevelCopy && t.probe.Kept > from && t.probe.Earlier > 0 {
					// or of the window before it, whose rate is the level
					res.RollbackEarlier, reason = true, ReasonRollbackToLevel
				}
			}
			t.start, t.begin = from, min(k, t.cfg.Steps-1)
			evs = append(evs, Event{Step: k, Kind: KindDecay, NewLR: from, Reason: reason})
		}
		res.Events = evs
		t.opt.emit(t.Name(), evs)
	}
	res.NextLR = t.LR()
	res.Average = t.cfg.Average && t.start > 0
	return res
}

// tailSnapshot is Tail's state: the inner scheduler's own snapshot, and the
// tail's step and α_s once it has begun.
type tailSnapshot struct {
	Inner json.RawMessage
	Step  int
	Start float64
	Begin int
	Probe *probeState `json:",omitempty"` // with TailConfig.Probe
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (t *Tail) MarshalBinary() ([]byte, error) {
	if err := t.waiting("MarshalBinary"); err != nil {
		return nil, err
	}
	if t.start > 0 || t.probe.On {
		if err := t.st.between("MarshalBinary"); err != nil {
			return nil, err
		}
	}
	in, err := t.inner.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := tailSnapshot{Inner: in, Step: t.st.k, Start: t.start, Begin: t.begin}
	if t.cfg.Probe {
		p := t.probe
		st.Probe = &p
	}
	return marshalSnapshot("tail", t.cfg, st)
}

// UnmarshalBinary restores a snapshot into any Tail value, the zero value
// included; the inner scheduler comes from the snapshot.
func (t *Tail) UnmarshalBinary(data []byte) error {
	var cfg TailConfig
	var st tailSnapshot
	if err := unmarshalSnapshot(data, "tail", &cfg, &st); err != nil {
		return err
	}
	if err := firstErr(checkIntMin("TailState.Step", st.Step, 0), checkIntMin("TailState.Begin", st.Begin, 0),
		checkNonNeg("TailState.Start", st.Start)); err != nil {
		return err
	}
	in, err := Restore(st.Inner)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if _, ok := in.(Switcher); cfg.FromSwitch && !ok {
		return fmt.Errorf("schedule: snapshot of tail: TailConfig.FromSwitch: %s never switches", in.Name())
	}
	n := &Tail{cfg: cfg, opt: t.opt, inner: in, st: stepper{k: st.Step}, start: st.Start, begin: st.Begin}
	if st.Probe != nil {
		if !cfg.Probe {
			return errors.New("schedule: snapshot of tail: probe state without TailConfig.Probe")
		}
		if err := st.Probe.check(); err != nil {
			return err
		}
		if st.Probe.Cand && !(cfg.ProbeRollback && st.Probe.On) {
			return errors.New("schedule: snapshot of tail: a candidate copy without a running probe with TailConfig.ProbeRollback")
		}
		if st.Probe.CapCheck && !(cfg.ProbeCapConfirm && !st.Probe.On && st.Start > 0) {
			return errors.New("schedule: snapshot of tail: the cap's check without a decay begun by the cap with TailConfig.ProbeCapConfirm")
		}
		if st.Probe.Retry && !(cfg.ProbeRetry && st.Probe.On) {
			return errors.New("schedule: snapshot of tail: a rate on its second window without a running probe with TailConfig.ProbeRetry")
		}
		if st.Probe.BestN > 0 && !cfg.ProbeWelch {
			return errors.New("schedule: snapshot of tail: a best window without TailConfig.ProbeWelch")
		}
		if st.Probe.GuardN > 0 && !cfg.WarmupGuard {
			return errors.New("schedule: snapshot of tail: a warm-up's best window without TailConfig.WarmupGuard")
		}
		n.probe = *st.Probe
	}
	if o, ok := in.(interface{ setOptions(options) }); ok {
		o.setOptions(t.opt)
	}
	*t = *n
	return nil
}
