package salsagomlx

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

var phaseRE = regexp.MustCompile(`"` + PhaseLabel + `":"([a-z]+)"`)

// labelsNow returns the goroutine profile's text (debug=1), which prints
// each goroutine's labels.
func labelsNow(t *testing.T) string {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// phasesNow returns the values of PhaseLabel that the running goroutines
// carry, read from a goroutine profile (debug=1 prints each one's labels).
func phasesNow(t *testing.T) []string {
	var out []string
	for _, m := range phaseRE.FindAllStringSubmatch(labelsNow(t), -1) {
		out = append(out, m[1])
	}
	return out
}

// With LabelPhases on, each graph runs under its phase's label: the model
// function, called when a graph is first built inside its call, sees the
// label of that call.
func TestPhaseLabels(t *testing.T) {
	LabelPhases(true)
	t.Cleanup(func() { LabelPhases(false) })
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

// Off, the default, a call leaves the caller's own pprof labels alone and
// adds none.
func TestPhaseLabelsOff(t *testing.T) {
	var seen []string
	net := func(scope *model.Scope, x *Node) *Node {
		seen = append(seen, labelsNow(t))
		return layers.DenseWithBias(scope.In("d"), x, 3)
	}
	tr, err := New(gobackend.GetBackend(), model.NewStore(), net, Config{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	X, y := randBatch(r, 16, 5, 3)
	xt, yt := tensorsOf(X, y, 5)
	const mine = `"caller":"mine"`
	var after string
	pprof.Do(context.Background(), pprof.Labels("caller", "mine"), func(context.Context) {
		if _, _, err = tr.Grad(xt, yt); err == nil {
			after = labelsNow(t)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !strings.Contains(seen[0], mine) || phaseRE.MatchString(seen[0]) {
		t.Errorf("during the call: want the caller's label %s and no %s", mine, PhaseLabel)
	}
	if !strings.Contains(after, mine) {
		t.Errorf("after the call: the caller's label %s is gone", mine)
	}
}
