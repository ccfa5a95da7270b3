package salsagomlx

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"runtime/pprof"
	"slices"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

var phaseRE = regexp.MustCompile(`"` + PhaseLabel + `":"([a-z]+)"`)

// phasesNow returns the values of PhaseLabel that the running goroutines
// carry, read from a goroutine profile (debug=1 prints each one's labels).
func phasesNow(t *testing.T) []string {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range phaseRE.FindAllStringSubmatch(b.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// Each graph runs under its phase's label: the model function, called when
// a graph is first built inside its call, sees the label of that call.
func TestPhaseLabels(t *testing.T) {
	if got := phasesNow(t); len(got) != 0 {
		t.Fatalf("labels %v before any call", got)
	}
	var seen [][]string
	net := func(scope *model.Scope, x *Node) *Node {
		seen = append(seen, phasesNow(t))
		return layers.DenseWithBias(scope.In("d"), x, 3)
	}
	store := model.NewStore()
	tr, err := New(gobackend.GetBackend(), store, net, Config{LR: 0.1, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	X, y := randBatch(r, 16, 5, 3)
	xt, yt := tensorsOf(X, y, 5)
	steps := []struct {
		phase string
		run   func() error
	}{
		{"step", func() error { _, err := tr.StepStats(xt, yt); return err }},
		{"grad", func() error { _, _, err := tr.Grad(xt, yt); return err }},
		{"trial", func() error { _, err := tr.Trial(xt, yt, 0.1); return err }},
		{"eval", func() error { _, _, err := tr.Evaluate(xt, yt); return err }},
	}
	for _, s := range steps {
		n := len(seen)
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		if len(seen) != n+1 {
			t.Fatalf("%s: the model was built %d times, want once", s.phase, len(seen)-n)
		}
		if got := seen[n]; !slices.Contains(got, s.phase) || slices.ContainsFunc(got, func(p string) bool { return p != s.phase }) {
			t.Errorf("%s: labels %v while its graph was built, want only %q", s.phase, got, s.phase)
		}
	}
	if got := phasesNow(t); len(got) != 0 {
		t.Errorf("labels %v after the calls: a label outlived its call", got)
	}
}
