package replay_test

import (
	"strings"
	"testing"

	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
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
		{"sasa+", []replay.Validation{{2, 1}}, "1 validation losses, but sasa+ does not validate (a -val method or plateau does)"},
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
	s, _ := schedule.New("sasa+-val", cfg)
	evs, _, err := replay.RunValidated(rows, s, []replay.Validation{{1, 2}, {2, 1}})
	if err != nil || len(evs) != 2 || evs[0].Kind != schedule.KindValidation || evs[1].Step != 2 || evs[1].ValLoss != 1 {
		t.Errorf("%+v, %v", evs, err)
	}
}
