package synthetic

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"
)

var (
	loadMu   sync.Mutex
	problems = map[string]*Problem{}
)

// loadProblem loads a problem once per test binary.
func loadProblem(t testing.TB, name string) *Problem {
	t.Helper()
	dir := filepath.Join(conformance.PublicDir(t), "problems")
	loadMu.Lock()
	defer loadMu.Unlock()
	if p, ok := problems[name]; ok {
		return p
	}
	p, err := Load(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	problems[name] = p
	return p
}

// meta is the part of a run's meta.json the tests use.
type meta struct {
	Run     string         `json:"run"`
	Problem string         `json:"problem"`
	Config  map[string]any `json:"config"`
	Steps   int            `json:"steps"`
	Drops   [][2]float64   `json:"drops"`
	// Switches holds [step, reason] pairs.
	Switches           [][2]any `json:"switches"`
	FinalFullObjective float64  `json:"final_full_objective"`
	FinalLR            float64  `json:"final_lr"`
}

func readMeta(t testing.TB, run string) *meta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformance.PublicDir(t), run+".meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s.meta.json: %v", run, err)
	}
	return &m
}

// num returns the numeric config field name.
func (m *meta) num(t testing.TB, name string) float64 {
	t.Helper()
	v, ok := m.Config[name].(float64)
	if !ok {
		t.Fatalf("%s: config.%s = %v: not a number", m.Run, name, m.Config[name])
	}
	return v
}

var errNoSnapshot = errors.New("test scheduler: no snapshots")
