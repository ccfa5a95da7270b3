package replay_test

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

func runs(t testing.TB, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, "*.meta.json"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no meta.json in %s: %v", dir, err)
	}
	var names []string
	for _, p := range m {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".meta.json"))
	}
	sort.Strings(names)
	return names
}

// readRun reads a public run's meta.json, trace and events.
func readRun(t *testing.T, dir, run string) (*trace.Meta, []trace.Row, []schedule.Event) {
	t.Helper()
	meta, err := trace.ReadMeta(filepath.Join(dir, run+".meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := trace.ReadTraceFile(filepath.Join(dir, run+".trace.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := trace.ReadEventsFile(filepath.Join(dir, run+".events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return meta, rows, evs
}

// close reports whether a and b agree to rel relative difference.
func close(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// CompareEvents checks that got has the same steps, kinds and decisions as
// want, and floats within rel.
func compareEvents(t *testing.T, got, want []schedule.Event, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d events, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.Step != w.Step || g.Kind != w.Kind {
			t.Fatalf("event %d: step %d %v, want step %d %v", i, g.Step, g.Kind, w.Step, w.Kind)
		}
		type fl struct {
			name string
			g, w float64
		}
		var fs []fl
		switch w.Kind {
		case schedule.KindTest:
			if g.Stationary != w.Stationary || g.Composite != w.Composite || g.Count != w.Count || g.Dof != w.Dof {
				t.Errorf("event %d (step %d test): stationary %v composite %v count %d dof %d, want %v %v %d %d",
					i, w.Step, g.Stationary, g.Composite, g.Count, g.Dof, w.Stationary, w.Composite, w.Count, w.Dof)
			}
			fs = []fl{{"mean", g.Mean, w.Mean}, {"lower", g.Lower, w.Lower}, {"upper", g.Upper, w.Upper},
				{"mean1", g.Mean1, w.Mean1}, {"mean2", g.Mean2, w.Mean2}, {"std", g.Std, w.Std}}
		case schedule.KindSlopeTest:
			if g.Decreasing != w.Decreasing || g.Count != w.Count {
				t.Errorf("event %d (step %d slope_test): decreasing %v count %d, want %v %d", i, w.Step, g.Decreasing, g.Count, w.Decreasing, w.Count)
			}
			fs = []fl{{"slope", g.Slope, w.Slope}, {"prob", g.Prob, w.Prob}}
		case schedule.KindDrop:
			fs = []fl{{"new_lr", g.NewLR, w.NewLR}}
		case schedule.KindSwitch:
			if g.Reason != w.Reason {
				t.Errorf("event %d (step %d switch): reason %q, want %q", i, w.Step, g.Reason, w.Reason)
			}
		}
		// lower and upper are mean ∓ hw. statopt's hw uses scipy's t.ppf,
		// which is off by up to 2.5e-11 relative (scipy 1.10.1 t.ppf(0.975, 9)
		// = 2.2621571627409915; mpmath at 40 digits gives 2.26215716279820554,
		// and stats.TQuantile 2.2621571627982049). Where mean ≈ ±hw that error
		// is magnified in lower or upper, so they are compared on the scale of
		// hw, the quantity that carries it.
		hw := (w.Upper - w.Lower) / 2
		for _, f := range fs {
			if f.name == "lower" || f.name == "upper" {
				if math.Abs(f.g-f.w) <= rel*math.Max(hw, math.Abs(f.w)) {
					continue
				}
			}
			if !close(f.g, f.w, rel) {
				t.Errorf("event %d (step %d %v): %s = %v, want %v (rel %.2g)", i, w.Step, w.Kind, f.name, f.g, f.w,
					math.Abs(f.g-f.w)/math.Max(math.Abs(f.g), math.Abs(f.w)))
			}
		}
	}
}

// TestConformance replays every public trace under its own statopt settings
// and requires every event: same steps, kinds and decisions, floats within
// 1e-9 relative (issue: "salsa replay must reproduce every public trace").
func TestConformance(t *testing.T) {
	dir := conformance.PublicDir(t)
	for _, run := range runs(t, dir) {
		t.Run(run, func(t *testing.T) {
			meta, rows, want := readRun(t, dir, run)
			method, cfg, err := replay.FromStatopt(&meta.Config)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schedule.New(method, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, rep, err := replay.Run(rows, s)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Diverged != 0 {
				t.Errorf("learning rate diverged from the trace at step %d: %v, logged %v", rep.Diverged, rep.ReplayLR, rep.LoggedLR)
			}
			compareEvents(t, got, want, 1e-9)
			if s.LR() != meta.FinalLR {
				t.Errorf("final lr %v, want %v", s.LR(), meta.FinalLR)
			}
		})
	}
}
