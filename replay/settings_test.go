package replay_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
	"github.com/salsaopt/salsa/trace"
)

func TestMethodNames(t *testing.T) {
	for _, c := range []struct{ name, canonical, sched string }{
		{"shb-hand", "shb-hand", "cut"}, {"cut", "shb-hand", "cut"},
		{"adam-warmup", "adam-warmup", "warmup"}, {"warmup", "adam-warmup", "warmup"},
		{"salsa", "salsa", "salsa"}, {"sasa+-val", "sasa+-val", "sasa+-val"}, {"constant", "constant", "constant"},
	} {
		m, err := replay.Canonical(c.name)
		s, err2 := replay.Scheduler(c.name)
		if m != c.canonical || s != c.sched || err != nil || err2 != nil {
			t.Errorf("%s: %q %q (%v, %v), want %q %q", c.name, m, s, err, err2, c.canonical, c.sched)
		}
	}
	for _, m := range replay.Methods {
		s, _ := replay.Scheduler(m)
		cfg, _ := schedule.Defaults(schedule.PresetPaper, 100, 10, 0.1)
		cfg.SetBudget(100, 5) // cosine and wsd need one
		if _, err := schedule.New(s, cfg); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if _, err := replay.Canonical("sgd"); err == nil || !strings.Contains(err.Error(), `method "sgd": must be one of salsa,`) {
		t.Errorf("sgd: %v", err)
	}
}

func TestRunValidatedErrors(t *testing.T) {
	rows := []trace.Row{{Step: 1, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1}, {Step: 2, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1}}
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 100, 10, 0.1)
	for _, c := range []struct {
		method string
		vals   []replay.Validation
		msg    string
	}{
		{"sasa+", []replay.Validation{{2, 1}}, "1 validation losses, but sasa+ does not validate (a -val method or plateau does, or salsa-probe with probe_val=1)"},
		{"sasa+-val", []replay.Validation{{3, 1}}, "validation 1 is after step 3: steps must be in order and within the trace's 1..2"},
		{"sasa+-val", []replay.Validation{{2, 1}, {1, 1}}, "validation 2 is after step 1"},
	} {
		s, err := schedule.New(c.method, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := replay.RunValidated(rows, s, c.vals); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %v: %v, want %q", c.method, c.vals, err, c.msg)
		}
	}
	// the rate probe with ProbeVal, started by the switch forced at step 1:
	// it asks at step 1 and not at step 2
	pc := cfg
	pc.SetBudget(100, 0)
	pc.Tail.Probe, pc.Tail.ProbeVal, pc.ForceSwitchAt = true, true, 1
	for _, c := range []struct {
		vals []replay.Validation
		msg  string
	}{
		{nil, "step 1: salsa-budget asks for the validation loss, and the run's events have none at this step"},
		{[]replay.Validation{{2, 1}}, "step 1: salsa-budget asks for the validation loss, and the run's events have none at this step"},
		{[]replay.Validation{{1, 1}, {2, 1}}, "step 2: the run's events have a validation loss here that salsa-budget did not ask for"},
		{[]replay.Validation{{1, 1}}, ""},
	} {
		s, err := schedule.New("salsa-budget", pc)
		if err != nil {
			t.Fatal(err)
		}
		lsRows := []trace.Row{{Step: 1, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1, Eta: 0.2, HasEta: true}, {Step: 2, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1}}
		evs, _, err := replay.RunValidated(lsRows, s, c.vals)
		if c.msg == "" && (err != nil || len(evs) < 2 || evs[len(evs)-1].Kind != schedule.KindValidation) {
			t.Errorf("salsa-budget with ProbeVal %v: events %+v, err %v: want the probe's start and its check", c.vals, evs, err)
		}
		if c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("salsa-budget with ProbeVal %v: %v, want %q", c.vals, err, c.msg)
		}
	}
	s, _ := schedule.New("sasa+-val", cfg)
	evs, _, err := replay.RunValidated(rows, s, []replay.Validation{{1, 2}, {2, 1}})
	if err != nil || len(evs) != 2 || evs[0].Kind != schedule.KindValidation || evs[1].Step != 2 || evs[1].ValLoss != 1 {
		t.Errorf("%+v, %v", evs, err)
	}
}

// TestRunBadRates: a row's lr or eta that is NaN, ±Inf or ≤ 0 is an error
// naming the step and the column. Before, a NaN eta answered the line
// search's trial "fail" without a word, and the replay's rate drifted.
func TestRunBadRates(t *testing.T) {
	cfg, _ := schedule.Defaults(schedule.PresetStatopt, 1, 1, 0.1)
	for _, c := range []struct {
		row trace.Row
		msg string
	}{
		{trace.Row{Step: 1, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1, Eta: math.NaN(), HasEta: true}, "replay: step 1: eta = NaN: must be finite and > 0"},
		{trace.Row{Step: 1, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1, Eta: math.Inf(1), HasEta: true}, "replay: step 1: eta = +Inf"},
		{trace.Row{Step: 1, LR: 0.1, Loss: 1, X1D: 0.1, D2: 1, Eta: 0, HasEta: true}, "replay: step 1: eta = 0"},
		{trace.Row{Step: 1, LR: math.NaN(), Loss: 1, X1D: 0.1, D2: 1, Eta: 0.1, HasEta: true}, "replay: step 1: lr = NaN"},
		{trace.Row{Step: 1, LR: -1, Loss: 1, X1D: 0.1, D2: 1}, "replay: step 1: lr = -1"},
	} {
		s, err := schedule.New("ssls", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := replay.Run([]trace.Row{c.row}, s); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err = %v, want %q", c.row, err, c.msg)
		}
	}
}

// TestFromStatoptUnread: a setting of a test or a line search that the
// config's method does not run is an error naming the key; force_var_mode
// "" forces nothing.
func TestFromStatoptUnread(t *testing.T) {
	for _, c := range []struct{ json, msg string }{
		{`{"opt":"QHM","lr":0.1,"leak_ratio":4}`, "replay: config leak_ratio: opt QHM does not read it (a setting of SASA and SALSA)"},
		{`{"opt":"SGD","lr":0.1,"significance":0.05}`, "config significance: opt SGD does not read it"},
		{`{"opt":"SGD","lr":0.1,"gamma":0.1}`, "config gamma: opt SGD does not read it (a setting of SSLS and SALSA)"},
		{`{"opt":"SASA","lr":0.1,"ls_max":10}`, "config ls_max: opt SASA does not read it"},
		{`{"opt":"SSLS","lr":0.1,"gamma":0.1,"testfreq":100}`, "config testfreq: opt SSLS does not read it"},
		{`{"opt":"SASA","lr":0.1,"auto_switch":1}`, "config auto_switch: opt SASA does not read it (a setting of SALSA)"},
		{`{"opt":"QHM","lr":0.1,"drop_factor":10}`, ""}, // constant-val's τ
		{`{"opt":"SALSA","lr":0.1,"gamma":0.1,"leak_ratio":4,"ls_max":10,"auto_switch":1}`, ""},
	} {
		var sc trace.StatoptConfig
		if err := json.Unmarshal([]byte(c.json), &sc); err != nil {
			t.Fatal(err)
		}
		_, _, err := replay.FromStatopt(&sc)
		if c.msg == "" && err != nil || c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s: err = %v, want %q", c.json, err, c.msg)
		}
	}
	// var_mode bm with force_var_mode "" is batch means, not the default.
	var sc trace.StatoptConfig
	if err := json.Unmarshal([]byte(`{"opt":"SASA","lr":0.1,"var_mode":"bm","force_var_mode":""}`), &sc); err != nil {
		t.Fatal(err)
	}
	if _, cfg, err := replay.FromStatopt(&sc); err != nil || cfg.SASAPlus.Variance != stats.BM {
		t.Errorf("var_mode bm, force_var_mode \"\": variance %v, err %v; want BM", cfg.SASAPlus.Variance, err)
	}
}

// TestReplayNormCap: a trace with the x2 column replays salsa-budget's
// norm cap. The rows are recorded from the scheduler itself, driven with
// falling losses and ‖x‖² growing as α² (so that a window at twice the rate
// grows it four times as much, and the cap fires); replayed, they give the
// recorded events. Without x2 the replay is refused at the first step that
// reads it, and with x2 only where the run measured it, nowhere else.
func TestReplayNormCap(t *testing.T) {
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 400, 10, 0.1)
	cfg.SetBudget(400, 0)
	cfg.Tail.Probe, cfg.Tail.ProbeNormCap, cfg.ForceSwitchAt = true, true, 1
	rec, err := schedule.New("salsa-budget", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rows []trace.Row
	var want []schedule.Event
	x2, capped, asked := 100.0, false, 0
	for k := 1; k <= 400; k++ {
		row := trace.Row{Step: k, Loss: 2 - float64(k)/400, X1D: 0.1, D2: 1}
		req, err := rec.Begin(row.Loss, 1e-300)
		for err == nil && req.Eval {
			row.Eta, row.HasEta = req.Eta, true
			req, err = rec.Trial(row.Loss - math.Max(1, math.Abs(row.Loss))) // as the replay answers an accepted trial
		}
		if err != nil {
			t.Fatal(err)
		}
		row.LR = req.LR
		x2 += 200 * req.LR * req.LR
		if schedule.AsksNorm(rec) {
			row.X2, row.HasX2 = x2, true
			asked++
		}
		res, err := rec.End(schedule.Observation{X1D: row.X1D, D2: row.D2, X2: x2})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Events {
			capped = capped || e.Reason == schedule.ReasonNormCap
		}
		want = append(want, res.Events...)
		rows = append(rows, row)
	}
	if !capped || asked == 0 || asked == len(rows) {
		t.Fatalf("the recorded run: capped %v, ‖x‖² read at %d of %d steps: want the cap, and no read in the decay (events %+v)", capped, asked, len(rows), want)
	}
	s, _ := schedule.New("salsa-budget", cfg)
	got, _, err := replay.Run(rows, s)
	if err != nil || !slices.EqualFunc(got, want, func(a, b schedule.Event) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("replay: %v\n%+v\nwant\n%+v", err, got, want)
	}
	bare := slices.Clone(rows)
	for i := range bare {
		bare[i].X2, bare[i].HasX2 = 0, false
	}
	s, _ = schedule.New("salsa-budget", cfg)
	if _, _, err := replay.Run(bare, s); err == nil || !strings.Contains(err.Error(), "step 1:") || !strings.Contains(err.Error(), "probe_norm_cap=1") {
		t.Errorf("without x2: %v, want a refusal at step 1 naming probe_norm_cap=1", err)
	}
}

// normRecorder asks for ‖x_{k+1}‖² at every step and records what it is
// given.
type normRecorder struct {
	schedule.Scheduler
	obs []schedule.Observation
}

func (n *normRecorder) AsksNorm() bool { return true }

func (n *normRecorder) End(obs schedule.Observation) (schedule.Result, error) {
	n.obs = append(n.obs, obs)
	return n.Scheduler.End(obs)
}

// TestReplayNormAtOtherRate: where the replay's rate α' is not the logged
// α, the scheduler gets x' = x_{k+1} + (α − α')d_k's statistics. Logged at
// α = 1 with d = (2, 0) and x_{k+1} = (1, 3): ⟨x_{k+1}, d⟩ = 2, ‖d‖² = 4,
// ‖x_{k+1}‖² = 10; at α' = 0.5, x' = (2, 3): ⟨x', d⟩ = 4 and ‖x'‖² = 13.
func TestReplayNormAtOtherRate(t *testing.T) {
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 100, 10, 0.5)
	inner, err := schedule.New("constant", cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &normRecorder{Scheduler: inner}
	rows := []trace.Row{{Step: 1, LR: 1, Loss: 1, X1D: 2, D2: 4, X2: 10, HasX2: true}}
	if _, rep, err := replay.Run(rows, s); err != nil || rep.Diverged != 1 {
		t.Fatalf("%+v, %v: want the replay to take another rate at step 1", rep, err)
	}
	if got := s.obs[0]; got.X1D != 4 || got.D2 != 4 || got.X2 != 13 {
		t.Errorf("at α' = 0.5: %+v, want X1D 4, D2 4, X2 13", got)
	}
}
