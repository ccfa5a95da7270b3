package schedule_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// probeConfig is salsa-budget with the probe, T = 200 steps (W = 10, the
// decay at step 160 at the latest), SALSA forced to switch after step 20.
func probeConfig() schedule.Config {
	c := small(schedule.PresetPaper)
	c.SetBudget(200, 0)
	c.Tail.Probe = true
	c.ForceSwitchAt = 20
	return c
}

// probeTail is a Tail of probeConfig.
func probeTail(t *testing.T) *schedule.Tail {
	t.Helper()
	return mustNewTail(t, probeConfig())
}

// stepLoss runs one step of s with the mini-batch loss f: every line-search
// trial passes, and the update statistics are zero.
func stepLoss(t *testing.T, s schedule.Scheduler, f float64) schedule.Result {
	t.Helper()
	return stepCap(t, s, f, math.Inf(1))
}

// window is n losses of mean m, alternately m + 0.1 and m − 0.1: a window's
// mean has variance (0.1²·n/(n−1))/n, 0.00111 for n = 10, so the margin is
// 1.645·√(2·0.00111) = 0.0775.
func window(m float64, n int) []float64 {
	fs := make([]float64, n)
	for i := range fs {
		fs[i] = m + 0.1*float64(1-2*(i%2))
	}
	return fs
}

// TestProbeTrace: a trace table. Windows of mean 0.9 (below the mean 1 of
// the W steps before the switch: accepted) and 0.95 (above 0.9 but within
// the margin: accepted), then 1.1 (rejected): the rate doubles twice, is
// tried once more at 8α_s, and the decay begins from 4α_s after step 50.
func TestProbeTrace(t *testing.T) {
	s := probeTail(t)
	var losses []float64
	for range 2 {
		losses = append(losses, window(1, 10)...)
	}
	for _, m := range []float64{0.9, 0.95, 1.1} {
		losses = append(losses, window(m, 10)...)
	}
	for range 150 {
		losses = append(losses, 0.5)
	}
	var as float64
	var probes, decays []schedule.Event
	for i, f := range losses {
		k := i + 1
		res := stepLoss(t, s, f)
		probes, decays = byKind(res.Events, probes, decays)
		if k == 20 {
			as = res.NextLR / 2
		}
		var want float64
		switch {
		case k <= 20:
			continue
		case k <= 30:
			want = 2 * as
		case k <= 40:
			want = 4 * as
		case k <= 50:
			want = 8 * as
		default:
			want = 4 * as * (1 - float64(k-51)/150)
		}
		if math.Abs(res.LR-want) > 1e-12*as {
			t.Fatalf("step %d: α = %v, want %v (α_s = %v)", k, res.LR, want, as)
		}
		if s.Searching() {
			t.Fatalf("step %d: searching after the switch", k)
		}
	}
	type row struct {
		step   int
		accept bool
		mean   float64
		reason string
	}
	want := []row{{20, true, 1, "start"}, {30, true, 0.9, ""}, {40, true, 0.95, ""}, {50, false, 1.1, ""}}
	if len(probes) != len(want) {
		t.Fatalf("probe events %+v, want %d", probes, len(want))
	}
	for i, w := range want {
		e := probes[i]
		if e.Step != w.step || e.Accept != w.accept || math.Abs(e.Mean-w.mean) > 1e-12 || e.Reason != w.reason {
			t.Errorf("probe event %d: %+v, want %+v", i, e, w)
		}
	}
	if len(decays) != 1 || decays[0].Step != 50 || math.Abs(decays[0].NewLR-4*as) > 1e-12*as || decays[0].Reason != "probe" {
		t.Errorf("decay events %+v, want one after step 50 from 4α_s", decays)
	}
}

// TestProbeRetry: a trace table of ProbeRetry. After the windows of
// TestProbeTrace's start (mean 1), 0.9 is accepted at 2α_s; 1.1 is rejected
// at 4α_s and retried at the same rate, against the same accepted window;
// 0.95 is accepted there, within the margin of 0.9; 1.1 is rejected at 8α_s,
// retried, and rejected again: the rate fails, and the decay begins from
// 4α_s after step 70. With the rollback, a retried window makes no copy
// and the failure rolls back to the copy of the window accepted at 0.95.
func TestProbeRetry(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(200, 0)
	c.Tail.Probe, c.Tail.ProbeRetry = true, true
	var losses []float64
	for range 2 {
		losses = append(losses, window(1, 10)...)
	}
	for _, m := range []float64{0.9, 1.1, 0.95, 1.1, 1.1} {
		losses = append(losses, window(m, 10)...)
	}
	for range 130 {
		losses = append(losses, 0.5)
	}
	type row struct {
		step   int
		accept bool
		mean   float64
		reason string
	}
	want := []row{{20, true, 1, "start"}, {30, true, 0.9, ""}, {40, false, 1.1, schedule.ReasonRetry},
		{50, true, 0.95, ""}, {60, false, 1.1, schedule.ReasonRetry}, {70, false, 1.1, ""}}
	for _, rollback := range []bool{false, true} {
		c.Tail.ProbeEarly, c.Tail.ProbeRollback = rollback, rollback
		shift := 0
		c.ForceSwitchAt = 20
		if rollback {
			// the early probe starts after W = 10 steps: the same windows without the first 10 steps
			c.ForceSwitchAt, shift = 100, 10
		}
		s := mustNewTail(t, c)
		var as float64
		var probes, decays []schedule.Event
		var saves, rollbacks []int
		for i, f := range losses[shift:] {
			k := i + 1
			res := stepLoss(t, s, f)
			probes, decays = byKind(res.Events, probes, decays)
			if res.Save {
				saves = append(saves, k)
			}
			if res.Rollback {
				rollbacks = append(rollbacks, k)
			}
			if k == 20-shift {
				as = res.NextLR / 2
			}
			var mult float64
			switch j := k + shift; {
			case j <= 20 || j > 70:
				continue
			case j <= 30:
				mult = 2
			case j <= 50:
				mult = 4
			default:
				mult = 8
			}
			if math.Abs(res.LR-mult*as) > 1e-12*as {
				t.Fatalf("rollback %v, step %d: α = %v, want %vα_s (α_s = %v)", rollback, k, res.LR, mult, as)
			}
		}
		if len(probes) != len(want) {
			t.Fatalf("rollback %v: probe events %+v, want %d", rollback, probes, len(want))
		}
		for i, w := range want {
			e := probes[i]
			if e.Step != w.step-shift || e.Accept != w.accept || math.Abs(e.Mean-w.mean) > 1e-12 || e.Reason != w.reason {
				t.Errorf("rollback %v: probe event %d: %+v, want %+v (steps %d sooner)", rollback, i, e, w, shift)
			}
		}
		from, reason := 4*as, "probe"
		if rollback {
			from, reason = 2*as, "rollback" // the early probe backs off one level
			if want := []int{10, 20, 40}; !reflect.DeepEqual(saves, want) || !reflect.DeepEqual(rollbacks, []int{60}) {
				t.Errorf("Saves at %v, want %v; Rollbacks at %v, want [60]", saves, want, rollbacks)
			}
		}
		if len(decays) != 1 || decays[0].Step != 70-shift || math.Abs(decays[0].NewLR-from) > 1e-12*as || decays[0].Reason != reason {
			t.Errorf("rollback %v: decays %+v, want one after step %d from %v with reason %q", rollback, decays, 70-shift, from, reason)
		}
	}
	c.Tail.Probe, c.Tail.ProbeEarly, c.Tail.ProbeRollback = false, false, false
	wantRefused(t, c, "TailConfig.ProbeRetry = true: needs Probe (--set probe=1)")
}

// TestProbeRetryResume: a snapshot taken on a retried rate's second window
// resumes it, and one that claims a retry without ProbeRetry is refused.
func TestProbeRetryResume(t *testing.T) {
	c := probeConfig()
	c.Tail.ProbeRetry = true
	fs := append(append(window(1, 20), window(0.9, 10)...), window(1.1, 15)...)
	s := mustNewTail(t, c)
	for _, f := range fs {
		stepLoss(t, s, f)
	}
	data := marshal(t, s)
	r, err := schedule.Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	for k := 46; k <= 50; k++ { // the second window at 4α_s is rejected too
		want, got := stepLoss(t, s, 1.1), stepLoss(t, r, 1.1)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: resumed %+v, uninterrupted %+v", k, got, want)
		}
		if k == 50 && (len(want.Events) != 2 || want.Events[1].Kind != schedule.KindDecay) {
			t.Errorf("step 50: events %+v, want the rejection and the decay", want.Events)
		}
	}
	bad := strings.Replace(string(data), `"ProbeRetry":true`, `"ProbeRetry":false`, 1)
	if bad == string(data) {
		t.Fatalf("the snapshot %s has no ProbeRetry field to change", data)
	}
	if _, err := schedule.Restore([]byte(bad)); err == nil || !strings.Contains(err.Error(), "second window") {
		t.Errorf("a retry without ProbeRetry: err = %v", err)
	}
}

// TestProbeOutlier: two losses in a row more than 4 standard deviations of a
// step above the accepted window's mean end the probe at the second, back
// to the last accepted rate: here α_s, since the first window never
// completes. One such loss alone does not.
func TestProbeOutlier(t *testing.T) {
	s := probeTail(t)
	for range 2 {
		for _, f := range window(1, 10) {
			stepLoss(t, s, f)
		}
	}
	as := s.LR() / 2
	stepLoss(t, s, 1)
	// σ of a step ≈ 0.105 in the window before the switch: 1.5 is an outlier
	if res := stepLoss(t, s, 1.5); len(res.Events) != 0 {
		t.Fatalf("one outlier: events %+v, want none", res.Events)
	}
	stepLoss(t, s, 1)
	if res := stepLoss(t, s, 1.5); len(res.Events) != 0 {
		t.Fatalf("a second outlier, not in a row: events %+v, want none", res.Events)
	}
	res := stepLoss(t, s, 1.5)
	if len(res.Events) != 2 || res.Events[0].Reason != "outlier" || res.Events[1].Kind != schedule.KindDecay || res.Events[1].NewLR != as {
		t.Fatalf("events %+v, want an outlier and the decay from α_s = %v", res.Events, as)
	}
	if want := as; math.Abs(s.LR()-want) > 1e-12 {
		t.Errorf("next α = %v, want %v", s.LR(), want)
	}
}

// TestProbeEndsAtTheBudgetShare: a probe that keeps accepting hands over to
// the decay at T − D at the latest, from the rate it last accepted.
func TestProbeEndsAtTheBudgetShare(t *testing.T) {
	s := probeTail(t)
	var decay schedule.Event
	var last float64
	for k := 1; k <= 200; k++ {
		f := 2 - 0.005*float64(k) + 0.1*float64(1-2*(k%2)) // always falling
		res := stepLoss(t, s, f)
		for _, e := range res.Events {
			if e.Kind == schedule.KindProbe && e.Accept {
				last = e.NewLR
			}
			if e.Kind == schedule.KindDecay {
				decay = e
			}
		}
	}
	if decay.Step != 160 || decay.NewLR != last || decay.Reason != "probe" {
		t.Errorf("decay %+v, want after step 160 from the last accepted rate %v", decay, last)
	}
}

// TestProbeSuite: the probe passes the shared suite (its state resumes
// exactly mid-window), and needs FromSwitch.
func TestProbeSuite(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	c.Tail.Probe = true
	c.ForceSwitchAt = 30
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	c.Tail.FromSwitch = false
	wantRefused(t, c, "TailConfig.Probe = true: needs FromSwitch (--set decay_from_switch=1)")
}

// earlyConfig is salsa-budget with the probe started early, T = 200 steps
// (W = 10, the decay at step 160 at the latest), SALSA forced to switch
// after step 100, long after W.
func earlyConfig() schedule.Config {
	c := small(schedule.PresetPaper)
	c.SetBudget(200, 0)
	c.Tail.Probe, c.Tail.ProbeEarly = true, true
	c.ForceSwitchAt = 100
	return c
}

// TestProbeEarly: with ProbeEarly the probe starts after the warm-up's first
// W = 10 steps, long before the switch (forced after step 100 here), from
// SSLS's rate α_s. A first window below the W steps before it is accepted;
// two outliers in a row in the next end the probe, and the decay begins
// from half the last accepted rate (2α_s/2) with the momentum zeroed.
func TestProbeEarly(t *testing.T) {
	c := earlyConfig()
	s := mustNewTail(t, c)
	for k := 1; k <= 10; k++ {
		if !s.Searching() {
			t.Fatalf("step %d: not searching during the warm-up", k)
		}
		res := stepLoss(t, s, window(1, 10)[k-1])
		if k < 10 && len(res.Events) != 0 {
			t.Fatalf("step %d: events %+v before W", k, res.Events)
		}
		if k == 10 && (len(res.Events) != 1 || res.Events[0].Kind != schedule.KindProbe || res.Events[0].Reason != "start") {
			t.Fatalf("step 10: events %+v, want the probe's start", res.Events)
		}
	}
	if s.Searching() {
		t.Fatal("searching after the probe started")
	}
	as := s.LR() / 2
	for _, f := range window(0.9, 10) {
		if res := stepLoss(t, s, f); res.LR != 2*as {
			t.Fatalf("step %d: α = %v, want 2α_s = %v", res.Step, res.LR, 2*as)
		}
	}
	stepLoss(t, s, 0.9)
	if res := stepLoss(t, s, 2); res.ResetMomentum || len(res.Events) != 0 {
		t.Fatalf("one outlier: %+v, want no event and the momentum kept", res)
	}
	res := stepLoss(t, s, 2)
	if len(res.Events) != 2 || res.Events[0].Reason != "outlier" || res.Events[1].Kind != schedule.KindDecay ||
		res.Events[1].NewLR != as || !res.ResetMomentum {
		t.Fatalf("second outlier: %+v, want the decay from 2α_s/2 = %v and the momentum zeroed", res, as)
	}
	if res.NextLR != as {
		t.Errorf("next α = %v, want %v", res.NextLR, as)
	}
	c.Tail.Probe = false
	wantRefused(t, c, "TailConfig.ProbeEarly = true: needs Probe (--set probe=1)")
}

// TestProbeEarlySuite: the early probe passes the shared suite.
func TestProbeEarlySuite(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	c.Tail.Probe, c.Tail.ProbeEarly = true, true
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
}

// TestProbeEarlyEnds: an early probe's end by a rejected window also backs
// off one level and zeroes the momentum; an end at T − D, where no rate
// failed, does neither.
func TestProbeEarlyEnds(t *testing.T) {
	c := earlyConfig()
	s := mustNewTail(t, c)
	for _, f := range window(1, 10) {
		stepLoss(t, s, f)
	}
	as := s.LR() / 2
	var res schedule.Result
	for _, m := range []float64{0.9, 1.1} { // 2α_s accepted, 4α_s rejected
		for _, f := range window(m, 10) {
			res = stepLoss(t, s, f)
		}
	}
	if res.Step != 30 || len(res.Events) != 2 || res.Events[0].Accept || res.Events[1].Kind != schedule.KindDecay ||
		res.Events[1].NewLR != as || !res.ResetMomentum {
		t.Fatalf("rejected window: %+v, want the decay after step 30 from 2α_s/2 = %v and the momentum zeroed", res, as)
	}

	s = mustNewTail(t, c)
	for k := 1; k <= 200; k++ {
		f := 2 - 0.005*float64(k) + 0.1*float64(1-2*(k%2)) // always falling
		res = stepLoss(t, s, f)
		if k == 10 {
			as = res.NextLR / 2
		}
		if k == 160 {
			break
		}
	}
	// the windows ending at steps 20, ..., 160 all accepted: 2^15·α_s
	want := math.Ldexp(as, 15)
	if n := len(res.Events); n == 0 || res.Events[n-1].Kind != schedule.KindDecay || math.Abs(res.Events[n-1].NewLR-want) > 1e-9*want || res.ResetMomentum {
		t.Fatalf("step 160: %+v, want the decay from the last accepted rate %v, the momentum kept", res, want)
	}
}

// TestProbeRollback: with ProbeRollback the caller is asked to keep the
// parameters where the probe starts and after every accepted window that
// does not end on an outlier, and a failed rate (a rejected window, or two
// outliers in a row) rolls them back with the momentum zeroed; an end at
// T − D, where no rate failed, does not. Either end releases the copy: no
// rollback follows.
func TestProbeRollback(t *testing.T) {
	c := earlyConfig()
	c.Tail.ProbeRollback = true
	// flags are a step's Save, Confirm, Rollback and Release, and with a
	// Rollback the step whose parameters it puts back, as a caller that
	// follows the protocol of package schedule keeps them
	type flags struct {
		save, confirm, rollback, release bool
		to                               int
	}
	run := func(fs []float64) (map[int]flags, map[int][]schedule.Event) {
		s := mustNewTail(t, c)
		got, evs := map[int]flags{}, map[int][]schedule.Event{}
		cand, keep := 0, 0 // the steps whose parameters the copies hold
		for _, f := range fs {
			res := stepLoss(t, s, f)
			k := res.Step
			evs[k] = res.Events
			if res.Save {
				cand = k
			}
			if res.Confirm {
				keep, cand = cand, 0
			}
			fl := flags{res.Save, res.Confirm, res.Rollback, res.Release, 0}
			if res.Rollback {
				fl.to = keep
				n := len(res.Events)
				if !res.ResetMomentum || n == 0 || res.Events[n-1].Kind != schedule.KindDecay || res.Events[n-1].Reason != "rollback" {
					t.Errorf("step %d: %+v, want the momentum zeroed and a decay with reason rollback", k, res)
				}
			}
			if fl != (flags{}) {
				got[k] = fl
			}
		}
		return got, evs
	}
	check := func(name string, fs []float64, want map[int]flags) map[int][]schedule.Event {
		t.Helper()
		got, evs := run(fs)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Save/Confirm/Rollback/Release at %+v, want %+v", name, got, want)
		}
		return evs
	}
	kept := flags{save: true, confirm: true} // the probe's start: kept at once
	candidate := flags{save: true}           // an accepted window's end
	confirmed := flags{confirm: true}        // the step after it, its loss not an outlier
	back := func(to int) flags { return flags{rollback: true, release: true, to: to} }

	// start after step 10, 2α_s accepted after step 20 and its copy
	// confirmed by step 21's loss, 4α_s rejected after 30
	fs := append(append(window(1, 10), window(0.9, 10)...), window(1.1, 10)...)
	check("rejected window", fs, map[int]flags{10: kept, 20: candidate, 21: confirmed, 30: back(20)})

	// two outliers in a row in the third window: rolled back after step 23
	fs = append(append(window(1, 10), window(0.9, 10)...), 0.9, 5, 5)
	check("outliers", fs, map[int]flags{10: kept, 20: candidate, 21: confirmed, 23: back(20)})

	// the loss at the candidate of step 20 (step 21's) is an outlier: it is
	// not confirmed, and the second outlier rolls back to the copy of step
	// 10 (an H17 run diverged after a rollback to such a copy)
	fs = append(append(window(1, 10), window(0.9, 10)...), 5, 5)
	evs := check("the candidate's loss an outlier", fs, map[int]flags{10: kept, 20: candidate, 22: back(10)})
	if e := evs[21]; len(e) != 1 || e[0].Kind != schedule.KindProbe || e[0].Reason != schedule.ReasonCandidateOutlier ||
		!e[0].Accept || e[0].Count != 1 || e[0].Mean != 5 || e[0].NewLR != evs[20][0].NewLR {
		t.Errorf("step 21: events %+v, want one probe event with reason %q, the loss 5 and the rate of the window of step 20 (%+v)",
			e, schedule.ReasonCandidateOutlier, evs[20])
	}
	// a single outlier there leaves the candidate unconfirmed, the probe
	// going on: the next window's rejection rolls back to step 10 too
	fs = append(append(append(window(1, 10), window(0.9, 10)...), 5), window(1.1, 9)...)
	check("the candidate's loss an outlier, then a rejected window", fs, map[int]flags{10: kept, 20: candidate, 30: back(10)})

	// the second window accepted on its mean (0.925) but its last step an
	// outlier (1.5 > 1 + 4σ̂, σ̂ 0.105): no candidate after step 20, and the
	// first step at 4α_s, a second outlier, rolls back to the copy of step
	// 10 (an H5 run collapsed after a rollback to the parameters of step 20)
	fs = append(append(window(1, 10), window(0.85, 9)...), 1.5, 5)
	evs = check("accepted window ending on an outlier", fs, map[int]flags{10: kept, 21: back(10)})
	if e := evs[20]; len(e) != 1 || !e[0].Accept || e[0].Reason != schedule.ReasonEndsOnOutlier {
		t.Errorf("step 20: events %+v, want an accepted window with reason %q", e, schedule.ReasonEndsOnOutlier)
	}

	// always falling: every window accepted up to T − D = 160, no rollback;
	// the copies are released where the probe ends
	fs = fs[:0]
	for k := 1; k <= 160; k++ {
		fs = append(fs, 2-0.005*float64(k)+0.1*float64(1-2*(k%2)))
	}
	want := map[int]flags{10: kept}
	for k := 20; k < 160; k += 10 {
		want[k], want[k+1] = candidate, confirmed
	}
	want[160] = flags{release: true}
	check("budget", fs, want)

	c.Tail.Probe, c.Tail.ProbeEarly = false, false
	wantRefused(t, c, "TailConfig.ProbeRollback = true: needs Probe (--set probe=1)")
}

// TestProbeRollbackResume: a snapshot taken between a Save and the step
// that confirms it carries the candidate: restored, the next step confirms
// it as the uninterrupted run does, and a snapshot that claims a candidate
// without the rollback is refused.
func TestProbeRollbackResume(t *testing.T) {
	c := earlyConfig()
	c.Tail.ProbeRollback = true
	fs := append(window(1, 10), window(0.9, 10)...)
	s := mustNewTail(t, c)
	var res schedule.Result
	for _, f := range fs {
		res = stepLoss(t, s, f)
	}
	if !res.Save || res.Confirm {
		t.Fatalf("step 20: %+v, want a Save without its Confirm", res)
	}
	data := marshal(t, s)
	r, err := schedule.Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	want, got := stepLoss(t, s, 0.9), stepLoss(t, r, 0.9)
	if !want.Confirm || !reflect.DeepEqual(got, want) {
		t.Errorf("step 21: resumed %+v, uninterrupted %+v; want both to confirm the candidate", got, want)
	}
	c.Tail.ProbeRollback = false
	bad := strings.Replace(string(data), `"ProbeRollback":true`, `"ProbeRollback":false`, 1)
	if bad == string(data) {
		t.Fatalf("the snapshot %s has no ProbeRollback field to change", data)
	}
	if _, err := schedule.Restore([]byte(bad)); err == nil || !strings.Contains(err.Error(), "candidate") {
		t.Errorf("a candidate without ProbeRollback: err = %v", err)
	}
}

// TestProbeRollbackSuite: the probe with rollbacks passes the shared suite.
func TestProbeRollbackSuite(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	c.Tail.Probe, c.Tail.ProbeEarly, c.Tail.ProbeRollback = true, true, true
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
}

// earlyRun steps s, made from earlyConfig, through the losses fs and
// returns the last step's Result and α_s, half the rate the early probe
// starts from after step 10.
func earlyRun(t *testing.T, s schedule.Scheduler, fs []float64) (res schedule.Result, as float64) {
	t.Helper()
	for i, f := range fs {
		res = stepLoss(t, s, f)
		if i == 9 { // the probe starts at 2α_s
			as = res.NextLR / 2
		}
	}
	return res, as
}

// TestProbeKeepRate: with ProbeKeepRate a failed rate (a rejected window,
// or two outliers in a row) still rolls back and zeroes the momentum, but
// the decay begins from the rate that reached the copy put back: the last
// accepted rate 2α_s itself, not 2α_s/2, when the next loss confirmed its
// window's copy, and the start rate α_s when it did not, the rollback going
// to the start's copy (a cnn run diverged decaying from 2α_s there). Without
// the rollback it is refused.
func TestProbeKeepRate(t *testing.T) {
	c := earlyConfig()
	c.Tail.ProbeRollback, c.Tail.ProbeKeepRate = true, true
	for _, tc := range []struct {
		name string
		fs   []float64
		step int
		from float64 // the decay's rate, in α_s
	}{
		{"rejected window", append(append(window(1, 10), window(0.9, 10)...), window(1.1, 10)...), 30, 2},
		{"outliers", append(append(window(1, 10), window(0.9, 10)...), 0.9, 5, 5), 23, 2},
		{"the candidate's loss an outlier", append(append(window(1, 10), window(0.9, 10)...), 5, 5), 22, 1},
	} {
		res, as := earlyRun(t, mustNewTail(t, c), tc.fs)
		n, want := len(res.Events), tc.from*as
		if res.Step != tc.step || n == 0 || res.Events[n-1].Kind != schedule.KindDecay || res.Events[n-1].NewLR != want ||
			!res.Rollback || !res.ResetMomentum || res.NextLR != want {
			t.Errorf("%s: %+v, want a rollback after step %d, the momentum zeroed and the decay from %gα_s = %v", tc.name, res, tc.step, tc.from, want)
		}
	}
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	c.Tail.ProbeRollback = false
	wantRefused(t, c, "TailConfig.ProbeKeepRate = true: needs ProbeEarly and ProbeRollback")
}

// TestProbeLevelCopy: with ProbeLevelCopy every Confirm after the start's
// keeps the copy it replaces as the earlier one (KeepEarlier), and a failed
// rate whose kept copy was reached at the last accepted rate 2α_s rolls
// back to that earlier copy, the one reached at the decay's level α_s
// (RollbackEarlier, reason "rollback to level"); when the kept copy is
// already the start's, reached at α_s, it rolls back to it as without the
// key. The decay's level is the same either way. It passes the shared
// suite, and is refused without the rollback, with ProbeKeepRate and with a
// back-off other than 2.
func TestProbeLevelCopy(t *testing.T) {
	c := earlyConfig()
	c.Tail.ProbeRollback, c.Tail.ProbeLevelCopy = true, true
	for _, tc := range []struct {
		name    string
		fs      []float64
		step    int
		earlier bool // the rollback puts back the earlier copy
		to      int  // the step whose parameters it puts back
	}{
		{"rejected window", append(append(window(1, 10), window(0.9, 10)...), window(1.1, 10)...), 30, true, 10},
		{"outliers", append(append(window(1, 10), window(0.9, 10)...), 0.9, 5, 5), 23, true, 10},
		// the candidate of step 20 not confirmed: the kept copy is the start's
		{"the candidate's loss an outlier", append(append(window(1, 10), window(0.9, 10)...), 5, 5), 22, false, 10},
		// 4α_s accepted too: the earlier copy is step 20's, reached at 2α_s
		{"a third window", append(append(append(window(1, 10), window(0.9, 10)...), window(0.8, 10)...), window(1.1, 10)...), 40, true, 20},
	} {
		s := mustNewTail(t, c)
		var res schedule.Result
		var as float64
		cand, keep, earlier := 0, 0, 0 // the steps whose parameters the copies hold
		for i, f := range tc.fs {
			res = stepLoss(t, s, f)
			if i == 9 {
				as = res.NextLR / 2
			}
			if res.Save {
				cand = res.Step
			}
			if res.Confirm {
				if res.KeepEarlier != (keep > 0) {
					t.Errorf("%s: step %d: KeepEarlier %v with a copy kept at step %d", tc.name, res.Step, res.KeepEarlier, keep)
				}
				if res.KeepEarlier {
					earlier = keep
				}
				keep, cand = cand, 0
			}
		}
		to := keep
		if res.RollbackEarlier {
			to = earlier
		}
		reason := "rollback"
		if tc.earlier {
			reason = schedule.ReasonRollbackToLevel
		}
		n := len(res.Events)
		// the level: half the last accepted rate
		want := res.Events[n-1].NewLR
		if res.Step != tc.step || !res.Rollback || res.RollbackEarlier != tc.earlier || to != tc.to || !res.ResetMomentum ||
			res.Events[n-1].Kind != schedule.KindDecay || res.Events[n-1].Reason != reason || res.NextLR != want {
			t.Errorf("%s: %+v, putting back step %d; want a rollback after step %d to step %d (earlier copy %v, reason %q)",
				tc.name, res, to, tc.step, tc.to, tc.earlier, reason)
		}
		// the same level as without the key
		off := c
		off.Tail.ProbeLevelCopy = false
		if ro, _ := earlyRun(t, mustNewTail(t, off), tc.fs); ro.NextLR != want || as == 0 {
			t.Errorf("%s: the decay from %v, without the key from %v", tc.name, want, ro.NextLR)
		}
	}
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	c.Tail.ProbeKeepRate = true
	wantRefused(t, c, "TailConfig.ProbeLevelCopy = true: not with ProbeKeepRate")
	c.Tail.ProbeKeepRate, c.Tail.ProbeBackoff = false, 4
	wantRefused(t, c, "TailConfig.ProbeLevelCopy = true: not with ProbeBackoff 4")
	c.Tail.ProbeBackoff, c.Tail.ProbeRollback = 2, false
	wantRefused(t, c, "TailConfig.ProbeLevelCopy = true: needs ProbeEarly and ProbeRollback")
	// the earlier copy's rate survives a snapshot between two windows
	c.Tail.ProbeRollback = true
	s := mustNewTail(t, c)
	fs := append(append(window(1, 10), window(0.9, 10)...), window(0.8, 10)...)
	for _, f := range append(fs, 0.8) {
		stepLoss(t, s, f)
	}
	data := marshal(t, s)
	if !strings.Contains(string(data), `"Earlier":`) {
		t.Fatalf("the snapshot %s has no earlier copy's rate", data)
	}
	r, err := schedule.Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range window(1.1, 9) {
		want, got := stepLoss(t, s, f), stepLoss(t, r, f)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: resumed %+v, uninterrupted %+v", want.Step, got, want)
		}
	}
}

// TestProbeBackoff: with ProbeBackoff b a failed rate rolls back as before,
// and the decay begins from the last accepted rate 2α_s divided by b, with
// or without the rollback; 0 is the probe's raise, 2. A factor below 1, a
// non-finite one, one without the early probe (which decays from the last
// accepted rate) and one with ProbeKeepRate (which decays from the copy's
// rate) are refused.
func TestProbeBackoff(t *testing.T) {
	fs := append(append(window(1, 10), window(0.9, 10)...), window(1.1, 10)...) // the window at 4α_s rejected
	for _, tc := range []struct {
		backoff  float64
		rollback bool
		from     float64 // the decay's rate, in α_s
	}{{0, false, 1}, {2, false, 1}, {4, false, 0.5}, {4, true, 0.5}, {1, true, 2}} {
		c := earlyConfig()
		c.Tail.ProbeBackoff, c.Tail.ProbeRollback = tc.backoff, tc.rollback
		res, as := earlyRun(t, mustNewTail(t, c), fs)
		n, want := len(res.Events), tc.from*as
		if res.Step != 30 || n == 0 || res.Events[n-1].Kind != schedule.KindDecay || res.Events[n-1].NewLR != want ||
			res.Rollback != tc.rollback || !res.ResetMomentum || res.NextLR != want {
			t.Errorf("ProbeBackoff %g, rollback %v: %+v, want the decay after step 30 from %gα_s = %v", tc.backoff, tc.rollback, res, tc.from, want)
		}
	}
	c := earlyConfig()
	c.Tail.ProbeBackoff = 4
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	for _, b := range []float64{0.5, -1, math.NaN(), math.Inf(1)} {
		c.Tail.ProbeBackoff = b
		wantRefused(t, c, fmt.Sprintf("TailConfig.ProbeBackoff = %v: must be finite and ≥ 1", b))
	}
	c.Tail.ProbeBackoff, c.Tail.ProbeRollback, c.Tail.ProbeKeepRate = 4, true, true
	wantRefused(t, c, "TailConfig.ProbeBackoff = 4: not with ProbeKeepRate")
	c.Tail.ProbeKeepRate, c.Tail.ProbeRollback, c.Tail.ProbeEarly = false, false, false
	wantRefused(t, c, "TailConfig.ProbeBackoff = 4: needs ProbeEarly")
	// typed as --set, 0 is refused with the rest of the range, not read as 2
	var typed schedule.Config
	for _, v := range []string{"0", "0.5", "-2", "Inf", "NaN"} {
		if err := typed.Set("probe_backoff", v); err == nil || !strings.Contains(err.Error(), "--set probe_backoff="+v+": must be finite and ≥ 1") {
			t.Errorf("--set probe_backoff=%s: err = %v", v, err)
		}
	}
	if err := typed.Set("probe_backoff", "4"); err != nil || typed.Tail.ProbeBackoff != 4 {
		t.Errorf("--set probe_backoff=4: err = %v, ProbeBackoff = %v", err, typed.Tail.ProbeBackoff)
	}
}

// TestProbeVariantsSuite: salsa-probe with the retry, and with the decay
// in cuts (TailConfig.Cuts), passes the shared suite.
func TestProbeVariantsSuite(t *testing.T) {
	for name, set := range map[string]func(*schedule.TailConfig){
		"retry":          func(c *schedule.TailConfig) { c.ProbeRetry = true },
		"cuts":           func(c *schedule.TailConfig) { c.Cuts = true },
		"guard":          func(c *schedule.TailConfig) { c.WarmupGuard = true },
		"norm":           func(c *schedule.TailConfig) { c.ProbeNormCap = true },
		"norm and retry": func(c *schedule.TailConfig) { c.ProbeNormCap, c.ProbeRetry = true, true },
	} {
		t.Run(name, func(t *testing.T) {
			c := small(schedule.PresetPaper)
			c.SetBudget(400, 0)
			c.Tail = c.Tail.WithProbe()
			set(&c.Tail)
			schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
		})
	}
}

// byKind appends the probe events of evs to probes and the decay events to
// decays.
func byKind(evs, probes, decays []schedule.Event) ([]schedule.Event, []schedule.Event) {
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindProbe:
			probes = append(probes, e)
		case schedule.KindDecay:
			decays = append(decays, e)
		}
	}
	return probes, decays
}

// wantRefused checks that salsa-budget refuses c with an error that says
// want.
func wantRefused(t *testing.T, c schedule.Config, want string) {
	t.Helper()
	if _, err := schedule.New("salsa-budget", c); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("salsa-budget: err = %v, want %q", err, want)
	}
}

// stepCap runs one step of s with the mini-batch loss f, where a line-search
// trial passes (at f − 10η) only at η ≤ cap, and the update statistics are
// zero: SSLS's rate rises by 1 + γ a step until 2α exceeds cap, and then
// stays.
func stepCap(t *testing.T, s schedule.Scheduler, f, cap float64) schedule.Result {
	t.Helper()
	return stepObs(t, s, f, cap, schedule.Observation{})
}

// stepObs is stepCap with the update statistics obs.
func stepObs(t *testing.T, s schedule.Scheduler, f, cap float64, obs schedule.Observation) schedule.Result {
	t.Helper()
	req, err := s.Begin(f, 1)
	if err != nil {
		t.Fatal(err)
	}
	for req.Eval {
		trial := math.Inf(1)
		if req.Eta <= cap {
			trial = f - 10*req.Eta
		}
		if req, err = s.Trial(trial); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.End(obs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestProbeSettle: with ProbeSettle the early probe does not start after W =
// 10 steps while SSLS's rate still rises (from lr0 0.05 towards the level
// the trials allow, 0.5); it starts at the first step k ≥ W whose rate is
// below twice the rate W steps before, from that rate. Without it, the
// same steps start the probe at W (TestProbeEarly).
func TestProbeSettle(t *testing.T) {
	c := earlyConfig()
	c.Tail.ProbeSettle = true
	s := mustNewTail(t, c)
	rates := []float64{s.LR()} // rates[k]: the rate after step k
	start := 0
	for k := 1; k <= 60 && start == 0; k++ {
		res := stepCap(t, s, 1, 1)
		for _, e := range res.Events {
			if e.Kind == schedule.KindProbe && e.Reason == "start" {
				start = k
			}
		}
		if start == 0 {
			rates = append(rates, s.LR())
		} else {
			rates = append(rates, s.LR()/2) // the probe tests 2α_s
		}
	}
	want := 0
	for k := 10; k < len(rates) && want == 0; k++ {
		if rates[k] < 2*rates[k-10] {
			want = k
		}
	}
	if want <= 10 {
		t.Fatalf("the rates %v settle at step %d: the test needs a warm-up that rises for more than W steps", rates, want)
	}
	if start != want {
		t.Fatalf("the probe started after step %d, want %d (the rates: %v)", start, want, rates)
	}
	if r := rates[start]; !(r > 0.25 && r <= 1) {
		t.Errorf("α_s = %v, want SSLS's settled rate, in (0.25, 1]", r)
	}
	c.Tail.ProbeEarly = false
	wantRefused(t, c, "TailConfig.ProbeSettle = true: needs ProbeEarly (--set probe_early=1)")
}

// TestSalsaProbe: the method salsa-probe is salsa-budget with the probe's
// four switches, Average, WarmupGuard, the cap and the decay's guard on
// (TailConfig.WithProbe). It has
// salsa-budget's configuration with them set, takes the same decisions step
// by step on the suite's problem, a rollback included, is named salsa-probe
// however the switches were set, with the guard or without (its runs before
// the guard joined it), and refuses --set keys for them as doing nothing.
// Build runs a recorded configuration as it is: a salsa-probe
// configuration without the guard stays without it there, and New puts it
// on. TestSuite runs the shared suite on it.
func TestSalsaProbe(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	s, err := schedule.New("salsa-probe", c)
	if err != nil {
		t.Fatal(err)
	}
	probe := s.(*schedule.Tail)
	on := c
	on.Tail.Probe, on.Tail.ProbeEarly, on.Tail.ProbeRollback, on.Tail.ProbeSettle, on.Tail.Average = true, true, true, true, true
	five := on // salsa-probe as its runs before the guard recorded it
	on.Tail.WarmupGuard, on.Tail.ProbeNormCap, on.Tail.DecayGuard = true, true, true
	budget := mustNewTail(t, on)
	if probe.Name() != "salsa-probe" || budget.Name() != "salsa-probe" || mustNewTail(t, five).Name() != "salsa-probe" || mustNewTail(t, c).Name() != "salsa-budget" {
		t.Errorf("names %q and, with the eight flags, %q; with the five before the guard %q; without them %q",
			probe.Name(), budget.Name(), mustNewTail(t, five).Name(), mustNewTail(t, c).Name())
	}
	for _, tc := range []struct {
		build func(string, schedule.Config, ...schedule.Option) (schedule.Scheduler, error)
		name  string
		want  bool
	}{{schedule.Build, "Build", false}, {schedule.New, "New", true}} {
		s, err := tc.build("salsa-probe", five)
		if err != nil {
			t.Fatal(err)
		}
		if g := s.(*schedule.Tail).Config(); g.WarmupGuard != tc.want || g.ProbeNormCap != tc.want || g.DecayGuard != tc.want {
			t.Errorf("%s(salsa-probe) of a configuration recorded without the guards and the cap: WarmupGuard %v, ProbeNormCap %v, DecayGuard %v, want %v",
				tc.name, g.WarmupGuard, g.ProbeNormCap, g.DecayGuard, tc.want)
		}
	}
	if !reflect.DeepEqual(c.ForMethod("salsa-probe"), on) || !reflect.DeepEqual(c.ForMethod("salsa-budget"), c) {
		t.Errorf("ForMethod: salsa-probe %+v, salsa-budget %+v; want the probe on for salsa-probe only", c.ForMethod("salsa-probe").Tail, c.ForMethod("salsa-budget").Tail)
	}
	for _, m := range []string{"salsa-probe", "salsa-budget", "cosine", "wsd"} {
		if !schedule.NeedsBudget(m) {
			t.Errorf("NeedsBudget(%q) = false", m)
		}
	}
	if schedule.NeedsBudget("salsa") || schedule.NeedsBudget("warmup") {
		t.Errorf("NeedsBudget: salsa %v, warmup %v; want false", schedule.NeedsBudget("salsa"), schedule.NeedsBudget("warmup"))
	}
	if probe.Config() != budget.Config() {
		t.Fatalf("salsa-probe's TailConfig %+v, want salsa-budget's with the probe on, %+v", probe.Config(), budget.Config())
	}
	p1, p2 := schedtest.NewProblem(4, 600), schedtest.NewProblem(4, 600)
	rollbacks := 0
	for k := 1; k <= 600; k++ {
		r1, err1 := p1.Step(probe, k)
		r2, err2 := p2.Step(budget, k)
		if err1 != nil || err2 != nil {
			t.Fatalf("step %d: %v, %v", k, err1, err2)
		}
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("step %d: salsa-probe %+v, salsa-budget with the probe on %+v", k, r1, r2)
		}
		if r1.Rollback {
			rollbacks++
		}
	}
	if rollbacks != 1 {
		t.Errorf("%d rollbacks in 600 steps, want 1: the comparison must reach the probe's end", rollbacks)
	}
	// the eight it sets, and the one the cap excludes
	for _, k := range []string{"probe", "probe_early", "probe_rollback", "probe_settle", "average", "warmup_guard", "probe_norm_cap", "decay_guard", "probe_level_copy"} {
		if schedule.KeyApplies(k, "salsa-probe") || !schedule.KeyApplies(k, "salsa-budget") {
			t.Errorf("--set %s: applies to salsa-probe %v, to salsa-budget %v; want false, true", k,
				schedule.KeyApplies(k, "salsa-probe"), schedule.KeyApplies(k, "salsa-budget"))
		}
	}
	fixedOn, refused := schedule.ProbeKeys()
	if want := []string{"average", "decay_guard", "probe", "probe_early", "probe_norm_cap", "probe_rollback", "probe_settle", "warmup_guard"}; !slices.Equal(fixedOn, want) {
		t.Errorf("ProbeKeys on = %v, want %v", fixedOn, want)
	}
	if err := refused["probe_level_copy"]; len(refused) != 1 || err == nil || !strings.Contains(err.Error(), "TailConfig.ProbeNormCap = true: not with ProbeLevelCopy") {
		t.Errorf("ProbeKeys refused = %v, want probe_level_copy with the cap's error", refused)
	}
	for _, k := range []string{"probe_keep_rate", "probe_cap_confirm", "total_steps", "decay_fraction", "decay_from_switch", "probe_retry", "probe_t", "probe_welch", "probe_val", "decay_cuts", "nmin", "gamma"} {
		if !schedule.KeyApplies(k, "salsa-probe") {
			t.Errorf("--set %s does not apply to salsa-probe", k)
		}
	}
	c.Tail.FromSwitch = false
	if _, err := schedule.New("salsa-probe", c); err == nil || !strings.Contains(err.Error(), "TailConfig.Probe = true: needs FromSwitch (--set decay_from_switch=1)") {
		t.Errorf("salsa-probe without FromSwitch: err = %v", err)
	}
}

// stepVal runs one step of s with the mini-batch loss f (as stepLoss) and,
// when End asks for the validation loss, reports val; asked says whether it
// did.
func stepVal(t *testing.T, s *schedule.Tail, f, val float64) (res schedule.Result, asked bool) {
	t.Helper()
	req, err := s.Begin(f, 1)
	if err != nil {
		t.Fatal(err)
	}
	for req.Eval {
		if req, err = s.Trial(f - 10*req.Eta); err != nil {
			t.Fatal(err)
		}
	}
	if res, err = s.End(schedule.Observation{}); err != nil {
		t.Fatal(err)
	}
	if !res.NeedVal {
		return res, false
	}
	if res, err = s.ReportVal(val); err != nil {
		t.Fatal(err)
	}
	return res, true
}

// TestProbeValTrace: a trace table of ProbeVal. The probe starts after the
// forced switch at step 20 (validation loss 2, the first reference), a
// window of mean 0.9 is accepted at step 30 (validation loss 1.9, the new
// reference), and steps 31 and 32 have losses of 5, far above the accepted
// window (0.9 + 4σ̂ = 1.32). The validation loss is asked for at steps 20,
// 30 and 32 only. At step 32 a validation loss of 1.8 overrules the
// outliers and the probe goes on at the same rate; 2.5 confirms them, and
// the decay begins from the last accepted rate, as it does without
// ProbeVal.
func TestProbeValTrace(t *testing.T) {
	for _, c := range []struct {
		val32   float64
		ends    bool
		reasons []string // the probe events' reasons at step 32
	}{
		{1.8, false, []string{schedule.ReasonOverruled}},
		{2.5, true, []string{"outlier"}},
	} {
		cfg := probeConfig()
		cfg.Tail.ProbeVal = true
		s := mustNewTail(t, cfg)
		var losses []float64
		for range 2 {
			losses = append(losses, window(1, 10)...)
		}
		losses = append(losses, window(0.9, 10)...)
		losses = append(losses, 5, 5)
		vals := map[int]float64{20: 2, 30: 1.9, 32: c.val32}
		var as float64
		for i, f := range losses {
			k := i + 1
			v, want := vals[k]
			res, asked := stepVal(t, s, f, v)
			if asked != want {
				t.Fatalf("val %v: step %d: asked for the validation loss %v, want %v", c.val32, k, asked, want)
			}
			var checks []schedule.Event
			var reasons []string
			for _, e := range res.Events {
				switch e.Kind {
				case schedule.KindValidation:
					checks = append(checks, e)
				case schedule.KindProbe:
					reasons = append(reasons, e.Reason)
				}
			}
			if want != (len(checks) == 1) || want && checks[0].ValLoss != v {
				t.Fatalf("val %v: step %d: validation events %+v, want one of %v: %v", c.val32, k, checks, v, want)
			}
			switch k {
			case 20:
				as = res.LR
				if checks[0].BestLoss != math.Inf(1) || !reflect.DeepEqual(reasons, []string{"start"}) {
					t.Errorf("step 20: %+v, probe reasons %q: want the start, and no reference before it", checks[0], reasons)
				}
			case 30:
				if checks[0].BestLoss != 2 || !reflect.DeepEqual(reasons, []string{""}) || !res.Events[len(res.Events)-1].Accept {
					t.Errorf("step 30: %+v, events %+v: want the window accepted against the reference 2", checks[0], res.Events)
				}
			case 32:
				bad := 0
				if c.ends {
					bad = 1
				}
				if checks[0].BestLoss != 1.9 || checks[0].Bad != bad || !reflect.DeepEqual(reasons, c.reasons) {
					t.Errorf("val %v: step 32: %+v, probe reasons %q: want reference 1.9, bad %d, reasons %q", c.val32, checks[0], reasons, bad, c.reasons)
				}
				decaying, from := s.Decaying()
				if decaying != c.ends || c.ends && from != 2*as {
					t.Errorf("val %v: step 32: decaying %v from %v, want %v from %v", c.val32, decaying, from, c.ends, 2*as)
				}
				if !c.ends && res.NextLR != 4*as {
					t.Errorf("val %v: step 32: next rate %v, want the rate under test %v", c.val32, res.NextLR, 4*as)
				}
			}
		}
	}
}

// TestProbeValSuite: the probe with every switch and ProbeVal passes the
// shared suite, its wait for the validation loss included; ProbeVal needs
// Probe, and a Tail without it never asks.
func TestProbeValSuite(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(400, 0)
	c.Tail = c.Tail.WithProbe()
	c.Tail.ProbeVal = true
	s := mustNewTail(t, c)
	if !s.AsksVal() || s.Name() != "salsa-probe" {
		t.Errorf("AsksVal %v, Name %q: want true, salsa-probe", s.AsksVal(), s.Name())
	}
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	c.Tail.ProbeVal = false
	if mustNewTail(t, c).AsksVal() {
		t.Error("AsksVal without ProbeVal")
	}
	c.Tail = schedule.TailConfig{Steps: 400, Fraction: 0.2, ProbeVal: true}
	wantRefused(t, c, "TailConfig.ProbeVal = true: needs Probe (--set probe=1)")
}

// TestAnswerVal: the caller's side of NeedVal. A Result that does not ask
// passes through; one that asks is answered with the loss given, and the
// Result is the step's. A nil loss, an error from it and a scheduler that
// is not a ValAsker are errors, and leave the Tail waiting for ReportVal.
func TestAnswerVal(t *testing.T) {
	cfg := probeConfig()
	cfg.Tail.ProbeVal = true
	s := mustNewTail(t, cfg)
	if !schedule.AsksVal(s) || schedule.AsksVal(mustCut(t)) {
		t.Fatalf("AsksVal: salsa-budget with ProbeVal %v, cut %v; want true, false", schedule.AsksVal(s), schedule.AsksVal(mustCut(t)))
	}
	calls := 0
	loss := func() (float64, error) { calls++; return 2, nil }
	var res schedule.Result
	for k := 1; k <= 20; k++ {
		req, err := s.Begin(1, 1)
		for err == nil && req.Eval {
			req, err = s.Trial(0.5)
		}
		if err == nil {
			res, err = s.End(schedule.Observation{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if k < 20 {
			if got, err := schedule.AnswerVal(s, res, loss); err != nil || !reflect.DeepEqual(got, res) || calls != 0 {
				t.Fatalf("step %d: a Result that does not ask: %+v, %v, %d calls", k, got, err, calls)
			}
		}
	}
	if !res.NeedVal {
		t.Fatal("the probe's start did not ask for the validation loss")
	}
	for _, c := range []struct {
		s    schedule.Scheduler
		loss func() (float64, error)
		want string
	}{
		{s, nil, "there is none to give"},
		{s, func() (float64, error) { return 0, errors.New("no data") }, "no data"},
		{mustCut(t), loss, "is not a ValAsker"},
	} {
		if _, err := schedule.AnswerVal(c.s, res, c.loss); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AnswerVal: err = %v, want %q", err, c.want)
		}
	}
	if _, err := s.Begin(1, 1); !errors.Is(err, schedule.ErrPhase) {
		t.Fatalf("after the failed answers the Tail is not waiting: Begin err = %v", err)
	}
	got, err := schedule.AnswerVal(s, res, loss)
	if err != nil || got.NeedVal || calls != 1 || len(got.Events) == 0 || got.Events[len(got.Events)-1].ValLoss != 2 {
		t.Errorf("the answer: %+v, %v, %d calls; want the step's Result with the validation loss 2", got, err, calls)
	}
}

// TestProbeT: with ProbeT the window test's quantile is Student's t with
// n − 1 degrees of freedom. The losses are those of held-out H65's run
// salsa-probe-lr0.01-s2 (runs/parity/heldout15-h65, steps.csv.gz, steps
// 29–33 and 34–38): a 5-step window accepted at 9.09 (mean 3.75490,
// σ̂ 0.03983), then a 5-step window at twice the rate of mean 3.79662. The
// normal quantile's margin is 1.645·√2·σ̂/√5 = 0.04144, so the window is
// rejected by 0.0003 and the decay begins; t's with 4 degrees of freedom
// is 2.132·√2·σ̂/√5 = 0.05371, so it is accepted and the rate doubles.
func TestProbeT(t *testing.T) {
	accepted := []float64{3.739962577819824, 3.7222838401794434, 3.8067822456359863, 3.7864365577697754, 3.719020128250122}
	next := []float64{3.554823637008667, 3.849350929260254, 4.026126384735107, 3.871227979660034, 3.68156361579895}
	for _, student := range []bool{false, true} {
		c := small(schedule.PresetPaper)
		c.SetBudget(100, 0) // W = 5
		c.Tail.Probe, c.Tail.ProbeT = true, student
		c.ForceSwitchAt = 10
		s := mustNewTail(t, c)
		var probes, decays []schedule.Event
		var as float64
		losses := append(append(append([]float64{}, window(3.8, 5)...), accepted...), next...)
		for i, f := range losses {
			res := stepLoss(t, s, f)
			probes, decays = byKind(res.Events, probes, decays)
			if i+1 == 10 {
				as = res.NextLR / 2
			}
			if i+1 == 15 {
				want := 4 * as // accepted: the next window at 4α_s
				if !student {
					want = as // rejected: the decay from the last accepted rate, α_s
				}
				if math.Abs(res.NextLR-want) > 1e-9*as {
					t.Errorf("ProbeT %v: rate after step 15 %v, want %v (α_s = %v)", student, res.NextLR, want, as)
				}
			}
		}
		if len(probes) != 2 || probes[0].Reason != "start" || math.Abs(probes[1].Mean-3.796618) > 1e-6 || probes[1].Accept != student {
			t.Errorf("ProbeT %v: probe events %+v, want the start and the window of mean 3.796618, accepted %v", student, probes, student)
		}
		if student == (len(decays) != 0) {
			t.Errorf("ProbeT %v: decay events %+v", student, decays)
		}
	}
	c := small(schedule.PresetPaper)
	c.Tail.ProbeT = true
	wantRefused(t, c, "TailConfig.ProbeT = true: needs Probe (--set probe=1")
}

// TestProbeWelch: with ProbeWelch the window test is Welch's, against the
// best accepted window.
//
// The first case replays held-out H65's run salsa-probe-lr0.01-s1 with
// warmup_share=0.2 (runs/warmshare/h65, steps.csv.gz): a 5-step window
// accepted at 9.65 (steps 17–21, mean 3.68751, σ̂ 0.04121), then one at
// 19.3 (steps 22–26, mean 3.78828, σ̂ 0.14196). Against the last window
// with its σ̂ the margin is 1.645·√2·0.04121/√5 = 0.0429, so it is
// rejected; Welch's T = 1.524 on ν = 4.67 is below t* = 2.047
// (stats.TestWelchTest), so it is accepted and the rate doubles.
//
// The second is a loss that creeps up by 0.008 a window, each window's
// spread ±0.011: every window passes against the last (margin 0.0114),
// while against the best one, the first, Welch's test rejects the second
// (T = 2.3 on ν = 8, t* = 1.86).
func TestProbeWelch(t *testing.T) {
	accepted := []float64{3.6924643516540527, 3.6469733715057373, 3.695446014404297, 3.749706506729126, 3.652961492538452}
	next := []float64{3.575141668319702, 3.8452818393707275, 3.9554667472839355, 3.7384514808654785, 3.8270392417907715}
	wiggle := func(m float64) []float64 {
		return []float64{m + 0.011, m - 0.011, m + 0.011, m - 0.011, m}
	}
	creep := append(append(append(wiggle(1), wiggle(1.008)...), wiggle(1.016)...), wiggle(1.024)...)
	for _, c := range []struct {
		name   string
		losses []float64 // after the first 5 of the 10 steps before the switch
		welch  bool
		accept []bool // the windows' verdicts after the start
		prev   []float64
	}{
		{"H65, last", append(append(window(3.8, 5), accepted...), next...), false, []bool{true, false}, []float64{3.82, 3.6875103473663329}},
		{"H65, Welch", append(append(window(3.8, 5), accepted...), next...), true, []bool{true, true}, []float64{3.82, 3.6875103473663329}},
		{"creep, last", creep, false, []bool{true, true, true}, []float64{1, 1.008, 1.016}},
		{"creep, Welch", creep, true, []bool{true, false}, []float64{1, 1}},
	} {
		cfg := small(schedule.PresetPaper)
		cfg.SetBudget(100, 0) // W = 5
		cfg.Tail.Probe, cfg.Tail.ProbeWelch = true, c.welch
		cfg.ForceSwitchAt = 10
		s := mustNewTail(t, cfg)
		var probes, decays []schedule.Event
		for _, f := range append(window(2, 5), c.losses...) {
			res := stepLoss(t, s, f)
			probes, decays = byKind(res.Events, probes, decays)
		}
		if len(probes) != len(c.accept)+1 || probes[0].Reason != "start" {
			t.Errorf("%s: probe events %+v, want the start and %d windows", c.name, probes, len(c.accept))
			continue
		}
		for i, e := range probes[1:] {
			if e.Accept != c.accept[i] || math.Abs(e.Prev-c.prev[i]) > 1e-6 {
				t.Errorf("%s: window %d: accept %v against %v, want %v against %v", c.name, i+1, e.Accept, e.Prev, c.accept[i], c.prev[i])
			}
		}
		if rejected := !c.accept[len(c.accept)-1]; rejected != (len(decays) == 1) {
			t.Errorf("%s: decay events %+v", c.name, decays)
		}
		if c.welch {
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var r schedule.Tail
			if err := r.UnmarshalBinary(b); err != nil {
				t.Errorf("%s: restore: %v", c.name, err)
			}
		}
	}
	c := small(schedule.PresetPaper)
	c.Tail.ProbeWelch = true
	wantRefused(t, c, "TailConfig.ProbeWelch = true: needs Probe (--set probe=1")
	c.SetBudget(100, 0)
	c.Tail.Probe, c.Tail.ProbeT = true, true
	wantRefused(t, c, "TailConfig.ProbeWelch = true: not with ProbeT")
}

// TestWarmupGuard: a trace table of TailConfig.WarmupGuard. T = 200 (W =
// 10), SALSA never switches (N_min above the budget, as on held-out H84),
// and every line-search trial passes, so SSLS's rate rises every step.
// Windows of mean 1 and 0.9 are each the best so far, and their ends are
// kept; one of 1.2 ends the warm-up: back to step 20's parameters, the
// decay from SSLS's rate there. A window of 1.02 is not significantly above
// 1 (Welch's t = 0.42), and the warm-up goes on to the budget's decay.
func TestWarmupGuard(t *testing.T) {
	c := small(schedule.PresetPaper)
	c.SetBudget(200, 0)
	c.Slope.NMin = 1000
	c.Tail.Probe, c.Tail.ProbeEarly, c.Tail.ProbeRollback, c.Tail.WarmupGuard = true, false, true, true
	type flags struct{ save, confirm, rollback, release, reset bool }
	kept := flags{save: true, confirm: true}
	for _, tc := range []struct {
		name   string
		fs     []float64
		flags  map[int]flags
		decay  int    // the decay's first step
		reason string // its event's
		from   int    // the step whose rate it decays from
	}{
		{"rise", append(append(window(1, 10), window(0.9, 10)...), window(1.2, 10)...),
			map[int]flags{10: kept, 20: kept, 30: {rollback: true, release: true, reset: true}}, 30, schedule.ReasonWarmupRise, 20},
		{"noise", append(append(window(1, 10), window(1.02, 10)...), window(0.95, 150)...),
			map[int]flags{10: kept, 30: kept}, 160, "budget", 160},
	} {
		s := mustNewTail(t, c)
		got, rates := map[int]flags{}, map[int]float64{}
		var decays []schedule.Event
		for i, f := range tc.fs {
			res := stepLoss(t, s, f)
			if res.Step != i+1 {
				t.Fatalf("%s: step %d, want %d", tc.name, res.Step, i+1)
			}
			rates[res.Step] = res.NextLR
			_, decays = byKind(res.Events, nil, decays)
			if fl := (flags{res.Save, res.Confirm, res.Rollback, res.Release, res.ResetMomentum}); fl != (flags{}) {
				got[res.Step] = fl
			}
			if len(decays) > 0 {
				break
			}
		}
		if !reflect.DeepEqual(got, tc.flags) {
			t.Errorf("%s: Save/Confirm/Rollback/Release/ResetMomentum at %+v, want %+v", tc.name, got, tc.flags)
		}
		if len(decays) != 1 || decays[0].Step != tc.decay || decays[0].Reason != tc.reason {
			t.Fatalf("%s: decay events %+v, want one at step %d, reason %q", tc.name, decays, tc.decay, tc.reason)
		}
		if tc.reason == schedule.ReasonWarmupRise && (decays[0].NewLR != rates[tc.from] || rates[tc.from] >= rates[tc.decay-1]) {
			t.Errorf("%s: the decay from %v, want step %d's rate %v (below step %d's, %v)", tc.name, decays[0].NewLR, tc.from, rates[tc.from], tc.decay-1, rates[tc.decay-1])
		}
		if on, from := s.Decaying(); !on || from != decays[0].NewLR {
			t.Errorf("%s: Decaying() = %v, %v", tc.name, on, from)
		}
	}

	// a snapshot in the middle of a window resumes to the same decisions
	fs := append(append(window(1, 10), window(0.9, 10)...), window(1.2, 10)...)
	run := func(cut int) []schedule.Event {
		var s schedule.Scheduler = mustNewTail(t, c)
		var evs []schedule.Event
		for i, f := range fs {
			if i == cut {
				b, err := s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				var r schedule.Tail
				if err := r.UnmarshalBinary(b); err != nil {
					t.Fatalf("restore at step %d: %v", i, err)
				}
				s = &r
			}
			evs = append(evs, stepLoss(t, s, f).Events...)
		}
		return evs
	}
	if a, b := run(-1), run(25); !reflect.DeepEqual(a, b) {
		t.Errorf("resumed at step 25: events %+v, want %+v", b, a)
	}

	d := small(schedule.PresetPaper)
	d.Tail.WarmupGuard = true
	wantRefused(t, d, "TailConfig.WarmupGuard = true: needs Probe and ProbeRollback")
	d.SetBudget(100, 0)
	d.Tail.Probe = true
	wantRefused(t, d, "TailConfig.WarmupGuard = true: needs Probe and ProbeRollback")
}

// capConfig is earlyConfig with the rollback and ProbeNormCap: the probe
// starts after step 10 from α_s, its windows are 10 steps long, the first
// at 2α_s.
func capConfig() schedule.Config {
	c := earlyConfig()
	c.Tail.ProbeRollback, c.Tail.ProbeNormCap = true, true
	return c
}

// capRun runs a Tail of capConfig over the warm-up's W = 10 losses of
// mean 1 and then windows of the given means, ‖x_{k+1}‖² at 100 until the
// probe's start and then reaching x2s[i] at the end of window i (in steps
// of a tenth of the window's growth). It returns the steps' Results, and
// α_s.
func capRun(t *testing.T, s *schedule.Tail, means, x2s []float64) ([]schedule.Result, float64) {
	t.Helper()
	ws := make([][]float64, len(means))
	for i, m := range means {
		ws[i] = window(m, 10)
	}
	return capRunLosses(t, s, ws, x2s)
}

// capRunLosses is capRun with each window's ten losses given.
func capRunLosses(t *testing.T, s *schedule.Tail, ws [][]float64, x2s []float64) ([]schedule.Result, float64) {
	t.Helper()
	var out []schedule.Result
	x2 := 100.0
	for _, f := range window(1, 10) {
		out = append(out, stepObs(t, s, f, math.Inf(1), schedule.Observation{X2: x2}))
	}
	as := s.LR() / 2
	for i, w := range ws {
		from := x2
		for j, f := range w {
			x2 = from + (x2s[i]-from)*float64(j+1)/10
			out = append(out, stepObs(t, s, f, math.Inf(1), schedule.Observation{X2: x2}))
			if d, _ := s.Decaying(); d {
				return out, as
			}
		}
	}
	return out, as
}

// TestProbeNormCap: a trace table of ProbeNormCap. The probe starts at
// ‖x‖² = 100; each row gives the windows' means and the ‖x‖² each window
// ends at, and the step the probe ends, its reason and the decay's rate.
// Each row runs with ProbeKeepRate too: a capped probe decays from the
// same level, a failed rate from the last accepted rate, twice it.
func TestProbeNormCap(t *testing.T) {
	for _, c := range []capRow{
		// 10, then 40: the second projects 40·min(4, 40/10) = 160 > 150,
		// and ends the probe after the window at 4α_s, decaying from 2α_s
		{"doubling projected", []float64{0.9, 0.8, 0.7}, []float64{110, 150, 1000}, 30, schedule.ReasonNormCap, 2, 160, 150},
		// 30, then 45: 4·45 = 180 would pass 175, but the measured ratio
		// 1.5 projects 67.5; after the third window (growth 5: 5·1 < 180)
		// the fourth is rejected (0.1 above the third's mean, no outlier):
		// the rollback, from 8α_s/2
		{"measured ratio below 4", []float64{0.9, 0.8, 0.7, 0.8}, []float64{130, 175, 180, 180}, 50, "rollback", 4, 0, 0},
		// the first window has no ratio yet: its growth 35 would have been
		// capped on an assumed ratio of 4 (140 > 135), and is not; the
		// second's ratio 5/35 projects 5 < 140, and the third is rejected
		{"first window: no ratio", []float64{0.9, 0.8, 0.9}, []float64{135, 140, 140}, 40, "rollback", 2, 0, 0},
		// −10, then 200: no ratio after a window that shrank ‖x‖² (4·200
		// would pass 290); the third's ratio 10/200 projects 10 < 300
		{"after a shrinking window: no ratio", []float64{0.9, 0.8, 0.7, 0.8}, []float64{90, 290, 300, 300}, 50, "rollback", 4, 0, 0},
		// ‖x‖² shrinking (weight decay): nothing to cap; the rejection
		// ends the probe
		{"shrinking", []float64{0.9, 0.8, 0.9}, []float64{90, 50, 40}, 40, "rollback", 2, 0, 0},
	} {
		for _, keep := range []bool{false, true} {
			if keep && c.reason == "rollback" {
				// ProbeKeepRate: from the last accepted rate, whose copy
				// the next loss confirmed, not half of it
				c.level *= 2
			}
			t.Run(fmt.Sprintf("%s/keep=%v", c.name, keep), func(t *testing.T) { capCase(t, keep, c) })
		}
	}
	c := capConfig()
	c.Tail.ProbeLevelCopy = true
	wantRefused(t, c, "TailConfig.ProbeNormCap = true: not with ProbeLevelCopy")
	c = capConfig()
	c.Tail.Probe, c.Tail.ProbeEarly, c.Tail.ProbeRollback = false, false, false
	wantRefused(t, c, "TailConfig.ProbeNormCap = true: needs Probe")
}

// TestProbeNormCapKeepRate: with ProbeKeepRate, a probe the cap ends
// decays from half the last accepted rate as without it, also when that is
// not the rate of the copy kept: here the loss at the candidate copy of the
// window at 2α_s is an outlier, so the kept copy is still the start's,
// reached at α_s, and the cap, after the window at 4α_s, decays from 2α_s.
func TestProbeNormCapKeepRate(t *testing.T) {
	cfg := capConfig()
	cfg.Tail.ProbeKeepRate = true
	second := append([]float64{5}, window(0.3, 9)...)
	out, as := capRunLosses(t, mustNewTail(t, cfg), [][]float64{window(0.9, 10), second, window(0.2, 10)}, []float64{110, 150, 1000})
	last := out[len(out)-1]
	n := len(last.Events)
	if last.Step != 30 || n == 0 || last.Events[n-1].Reason != schedule.ReasonNormCap || !near(last.Events[n-1].NewLR, 2*as) || last.Rollback {
		t.Errorf("step %d: %+v, want the cap after step 30 and a decay from 2α_s = %v without a rollback", last.Step, last, 2*as)
	}
	var outlier bool
	for _, r := range out {
		for _, e := range r.Events {
			outlier = outlier || e.Reason == schedule.ReasonCandidateOutlier
		}
	}
	if !outlier {
		t.Errorf("no %q event: the row does not test what it says", schedule.ReasonCandidateOutlier)
	}
}

// capCase runs a row of TestProbeNormCap, with ProbeKeepRate if keep.
func capCase(t *testing.T, keep bool, c capRow) {
	cfg := capConfig()
	cfg.Tail.ProbeKeepRate = keep
	s := mustNewTail(t, cfg)
	out, as := capRun(t, s, c.means, c.x2s)
	last := out[len(out)-1]
	if last.Step != c.step {
		t.Fatalf("the probe ended at step %d (%+v), want %d", last.Step, last.Events, c.step)
	}
	n := len(last.Events)
	if n < 2 || last.Events[n-1].Kind != schedule.KindDecay || last.Events[n-1].Reason != c.reason || !near(last.Events[n-1].NewLR, c.level*as) {
		t.Fatalf("step %d: events %+v, want a decay from %v·α_s = %v with reason %q", last.Step, last.Events, c.level, c.level*as, c.reason)
	}
	if !last.ResetMomentum || !last.Release {
		t.Errorf("step %d: %+v, want the momentum zeroed and the copies released", last.Step, last)
	}
	if c.reason != schedule.ReasonNormCap {
		return
	}
	capEv, acc := last.Events[n-2], last.Events[n-3]
	if last.Rollback || last.Save || capEv.Kind != schedule.KindProbe || capEv.Reason != schedule.ReasonNormCap || !near(capEv.Mean, c.projected) ||
		!near(capEv.Prev, c.x2) || capEv.Accept || !acc.Accept || capEv.NewLR != 2*acc.NewLR {
		t.Errorf("step %d: %+v, want no rollback, no copy saved, an accepted window and the cap's event (projected %v, the rate not run twice the accepted one)", last.Step, last, c.projected)
	}
}

// capRow is a row of TestProbeNormCap.
type capRow struct {
	name      string
	means     []float64
	x2s       []float64
	step      int
	reason    string
	level     float64 // × α_s
	projected float64 // the cap event's Mean
	x2        float64 // and its Prev
}

// near reports whether a and b agree to 1e-9 relative to b (at least 1).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// TestProbeNormCapAsks: a Tail with ProbeNormCap is a NormAsker and refuses
// a non-finite or negative ‖x_{k+1}‖², leaving the step open; without it X2
// is not read.
func TestProbeNormCapAsks(t *testing.T) {
	s := mustNewTail(t, capConfig())
	if !schedule.AsksNorm(s) {
		t.Fatal("AsksNorm = false with ProbeNormCap")
	}
	if schedule.AsksNorm(mustNewTail(t, earlyConfig())) {
		t.Fatal("AsksNorm = true without ProbeNormCap")
	}
	req, err := s.Begin(1, 1)
	for err == nil && req.Eval {
		req, err = s.Trial(0.5)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(schedule.Observation{X2: math.NaN()}); !errors.Is(err, schedule.ErrNonFinite) {
		t.Errorf("End(X2 = NaN) = %v, want ErrNonFinite", err)
	}
	if _, err := s.End(schedule.Observation{X2: -1}); err == nil || !strings.Contains(err.Error(), "X2 = -1") {
		t.Errorf("End(X2 = -1) = %v, want an error naming X2", err)
	}
	if _, err := s.End(schedule.Observation{X2: 1}); err != nil {
		t.Errorf("End(X2 = 1) after the refused ones: %v", err)
	}
	// until the decay begins, and not after: the decay does not read it
	s = mustNewTail(t, capConfig())
	out, _ := capRun(t, s, []float64{0.9, 0.8, 0.7}, []float64{110, 150, 1000})
	if d, _ := s.Decaying(); !d || out[len(out)-1].Events[len(out[len(out)-1].Events)-1].Reason != schedule.ReasonNormCap {
		t.Fatalf("after the windows: decaying %v, want the cap's decay", d)
	}
	if schedule.AsksNorm(s) {
		t.Error("AsksNorm = true in the decay")
	}
	// a step of the decay with X2 = NaN, which it does not read: accepted
	stepObs(t, s, 1, math.Inf(1), schedule.Observation{X2: math.NaN()})
}

// TestProbeNormCapResume: a snapshot taken inside the probe carries the
// windows' growth of ‖x‖²: restored, the run caps at the step the
// uninterrupted one does.
func TestProbeNormCapResume(t *testing.T) {
	x2 := func(k int) float64 { // 100 to step 10, then +1, +4 a step
		switch {
		case k <= 10:
			return 100
		case k <= 20:
			return 100 + float64(k-10)
		}
		return 110 + 4*float64(k-20)
	}
	fs := append(append(window(1, 10), window(0.9, 10)...), window(0.8, 10)...)
	run := func(s schedule.Scheduler, from int) []schedule.Result {
		var out []schedule.Result
		for k := from; k <= len(fs); k++ {
			out = append(out, stepObs(t, s, fs[k-1], math.Inf(1), schedule.Observation{X2: x2(k)}))
		}
		return out
	}
	s := mustNewTail(t, capConfig())
	want := run(s, 1)
	if e := want[29].Events; len(e) < 2 || e[len(e)-1].Reason != schedule.ReasonNormCap {
		t.Fatalf("step 30: events %+v, want the cap (10, then 40: 160 > 150)", e)
	}
	for _, m := range []int{15, 20, 25} {
		s := mustNewTail(t, capConfig())
		run(s, 1)
		s = mustNewTail(t, capConfig())
		head := want[:0:0]
		for k := 1; k <= m; k++ {
			head = append(head, stepObs(t, s, fs[k-1], math.Inf(1), schedule.Observation{X2: x2(k)}))
		}
		data, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		r, err := schedule.Restore(data)
		if err != nil {
			t.Fatal(err)
		}
		got := append(head, run(r, m+1)...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("resumed after step %d: the Results differ from the uninterrupted run's", m)
		}
	}
}

// TestProbeCapConfirm: with ProbeCapConfirm the cap (after step 30, the
// capped window's mean 0.8, σ̂ 0.105) keeps the copies, and the next loss,
// at the parameters the decay began from, decides: an outlier (above
// 0.8 + 4σ̂) puts back the kept copy with the momentum zeroed, and either
// way the copies are released and the decay goes on at its rate. The
// check's state survives a snapshot taken between the two steps; without
// the cap or the rollback the key is refused.
func TestProbeCapConfirm(t *testing.T) {
	cfg := capConfig()
	cfg.Tail.ProbeCapConfirm = true
	var rates []float64
	for _, c := range []struct {
		name     string
		next     float64
		rollback bool
		resume   bool
	}{
		{"outlier", 10, true, false},
		{"outlier, resumed after the cap", 10, true, true},
		{"not an outlier", 1.2, false, false},
	} {
		var s schedule.Scheduler = mustNewTail(t, cfg)
		out, _ := capRun(t, s.(*schedule.Tail), []float64{0.9, 0.8, 0.7}, []float64{110, 150, 1000})
		capped := out[len(out)-1]
		if n := len(capped.Events); capped.Step != 30 || n == 0 || capped.Events[n-1].Reason != schedule.ReasonNormCap {
			t.Fatalf("%s: %+v, want the cap after step 30", c.name, capped)
		}
		if capped.Release || capped.Rollback || !capped.ResetMomentum {
			t.Errorf("%s: step 30: %+v, want the momentum zeroed, and no rollback or release before the check", c.name, capped)
		}
		if c.resume {
			data, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if s, err = schedule.Restore(data); err != nil {
				t.Fatal(err)
			}
		}
		r := stepObs(t, s, c.next, math.Inf(1), schedule.Observation{})
		if r.Rollback != c.rollback || r.ResetMomentum != c.rollback || !r.Release || r.Save || r.Confirm {
			t.Errorf("%s: step 31: %+v, want Rollback and ResetMomentum %v, and the release", c.name, r, c.rollback)
		}
		if got := len(r.Events) == 1 && r.Events[0].Kind == schedule.KindProbe && r.Events[0].Reason == schedule.ReasonCapOutlier &&
			r.Events[0].Mean == c.next && r.Events[0].Prev == 0.8 && r.Events[0].NewLR == r.LR; got != c.rollback {
			t.Errorf("%s: step 31: events %+v, want the %q event: %v", c.name, r.Events, schedule.ReasonCapOutlier, c.rollback)
		}
		rates = append(rates, r.LR, r.NextLR)
		if r := stepObs(t, s, 1, math.Inf(1), schedule.Observation{}); r.Rollback || r.Release || len(r.Events) != 0 {
			t.Errorf("%s: step 32: %+v, want nothing after the check", c.name, r)
		}
	}
	if !(rates[0] == rates[2] && rates[2] == rates[4] && rates[1] == rates[3] && rates[3] == rates[5]) {
		t.Errorf("the rates of step 31 and the next %v: want the decay's, the same whatever the check says", rates)
	}
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, cfg) }, 600)
	c := cfg
	c.Tail.ProbeRollback = false
	wantRefused(t, c, "TailConfig.ProbeCapConfirm = true: needs ProbeNormCap and ProbeRollback")
	c = cfg
	c.Tail.ProbeNormCap = false
	wantRefused(t, c, "TailConfig.ProbeCapConfirm = true: needs ProbeNormCap and ProbeRollback")
}

// TestDecayGuard: a trace table of DecayGuard. The probe accepts a window
// of mean 0.9 (σ̂ 0.105) at 2α_s and rejects the next, and the decay begins
// from α_s after step 30; its losses then decide. Two outliers in a row
// (above 0.9 + 4σ̂ = 1.32) halve the decay's line and zero the momentum at
// the second, once per pair; an outlier alone, or outliers apart, do
// nothing. The count survives a snapshot between two outliers; without the
// probe the key is refused, and without the key nothing fires.
func TestDecayGuard(t *testing.T) {
	probe := append(append(window(1, 10), window(0.9, 10)...), window(1.1, 10)...)
	for _, c := range []struct {
		name  string
		decay []float64 // the losses of steps 31…
		fires []int     // the steps the guard fires at
	}{
		{"two in a row", []float64{0.8, 2, 2, 0.8}, []int{33}},
		{"apart", []float64{2, 0.8, 2, 0.8, 2}, nil},
		{"just below", []float64{1.3, 1.3, 1.3}, nil},
		{"four in a row: twice", []float64{2, 2, 2, 2}, []int{32, 34}},
		{"three in a row: once", []float64{2, 2, 2, 0.8}, []int{32}},
	} {
		for _, resume := range []bool{false, true} {
			cfg := earlyConfig()
			cfg.Tail.DecayGuard = true
			var s schedule.Scheduler = mustNewTail(t, cfg)
			plain := mustNewTail(t, earlyConfig())
			earlyRun(t, s, probe)
			res, _ := earlyRun(t, plain, probe)
			if n := len(res.Events); res.Step != 30 || n == 0 || res.Events[n-1].Kind != schedule.KindDecay {
				t.Fatalf("%s: step 30: %+v, want the decay's start", c.name, res)
			}
			halves := 1.0
			var fired []int
			for i, f := range c.decay {
				k := 31 + i
				if resume && i == 1 {
					data, err := s.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					if s, err = schedule.Restore(data); err != nil {
						t.Fatal(err)
					}
				}
				r, p := stepLoss(t, s, f), stepLoss(t, plain, f)
				if len(r.Events) > 0 {
					e := r.Events[0]
					if len(r.Events) != 1 || e.Kind != schedule.KindProbe || e.Reason != schedule.ReasonDecayGuard || e.Mean != f || e.Prev != 0.9 || !r.ResetMomentum {
						t.Errorf("%s: step %d: %+v, want the guard's event and the momentum zeroed", c.name, k, r)
					}
					fired = append(fired, k)
					halves /= 2
				}
				if !near(r.NextLR, halves*p.NextLR) || len(r.Events) > 0 && r.Events[0].NewLR != r.NextLR {
					t.Errorf("%s: step %d: next rate %v, want %v of the decay's without the guard, %v", c.name, k, r.NextLR, halves, p.NextLR)
				}
			}
			if !slices.Equal(fired, c.fires) {
				t.Errorf("%s (resumed %v): the guard fired at %v, want %v", c.name, resume, fired, c.fires)
			}
		}
	}
	c := earlyConfig()
	c.Tail.DecayGuard = true
	schedtest.Run(t, func() schedule.Scheduler { return mustNewTail(t, c) }, 600)
	c.Tail.Probe, c.Tail.ProbeEarly = false, false
	wantRefused(t, c, "TailConfig.DecayGuard = true: needs Probe")
}
