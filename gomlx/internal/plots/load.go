package plots

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
	"github.com/salsaopt/salsa/trace"
)

// The files of a run directory, as salsa train writes them.
const (
	StepsFile  = "steps.csv.gz" // per-step trace (trace.TraceHeader, or trace.StepSizeHeader for a learning-rate-free peer)
	EventsFile = "events.csv"   // scheduler events (trace.EventsHeader)
	EpochsFile = "epochs.csv"   // per-epoch summary (epochsHeader)
	RunFile    = "run.json"     // method, label and schedule.Config
	FailedFile = "failed.txt"   // the error the run stopped with, when it did
)

// epochRow is one line of epochs.csv. Steps is the cumulative number of
// optimizer steps at the end of the epoch; missing or empty cells are NaN.
type epochRow struct {
	Epoch, Steps                     int
	LR, TrainLoss, TestLoss, TestAcc float64
	TestPPL                          float64 // language models; NaN otherwise
	ValLoss                          float64 // the -val methods; NaN otherwise
}

// run is what a run directory holds; absent files leave their fields empty.
type run struct {
	dir, name     string
	rows          []trace.Row
	events        []schedule.Event
	epochs        []epochRow
	method, label string
	theta         float64              // SASA+ θ; 1/8 when run.json does not give it
	variance      stats.VarianceMethod // the run's σ̂ estimator, 0 if unknown
	cuts          bool                 // salsa-budget's decay in two cuts ×0.1, not the line to 0 (schedule.TailConfig.Cuts)
	notes         []string             // what was assumed or left out
	failed        string               // the error the run stopped with (FailedFile), or ""
}

// showsOwnStep reports whether the learning-rate figures draw the run's own
// step: the trace has a step size in every row (a peer whose step size is
// partly its own: trace.StepSizeHeader) and it is not α_k in some row
// (Schedule-Free's step is its α_k).
func (r *run) showsOwnStep() bool {
	return len(r.rows) > 0 && !slices.ContainsFunc(r.rows, func(row trace.Row) bool { return !row.HasStepSize }) &&
		slices.ContainsFunc(r.rows, func(row trace.Row) bool { return row.StepSize != row.LR })
}

// loadRun reads the run directory dir. It is an error if dir does not exist,
// holds neither a trace nor epochs.csv, or a file present cannot be parsed.
func loadRun(dir string) (*run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("plots: run directory %q does not exist", dir)
		}
		return nil, fmt.Errorf("plots: run directory %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("plots: run directory %q is not a directory", dir)
	}
	name := filepath.Base(filepath.Clean(dir))
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs)
	}
	r := &run{dir: dir, name: name, theta: 1.0 / 8}
	has := func(f string) bool { _, err := os.Stat(filepath.Join(dir, f)); return err == nil }
	if has(StepsFile) {
		if r.rows, err = trace.ReadTraceFile(filepath.Join(dir, StepsFile)); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	if has(EventsFile) {
		if r.events, err = trace.ReadEventsFile(filepath.Join(dir, EventsFile)); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	if has(EpochsFile) {
		if r.epochs, err = readEpochs(filepath.Join(dir, EpochsFile)); err != nil {
			return nil, err
		}
	}
	if len(r.rows) == 0 && len(r.epochs) == 0 {
		return nil, fmt.Errorf("plots: run directory %q holds neither %s nor %s with data", dir, StepsFile, EpochsFile)
	}
	r.readRunJSON()
	if b, err := os.ReadFile(filepath.Join(dir, FailedFile)); err == nil {
		r.failed = strings.TrimSpace(string(b))
		r.notes = append(r.notes, "the run stopped with an error ("+FailedFile+"): "+r.failed)
	}
	return r, nil
}

// readRunJSON takes the method, label, θ and variance estimator from
// run.json, noting what it had to assume.
func (r *run) readRunJSON() {
	b, err := os.ReadFile(filepath.Join(r.dir, RunFile))
	if err != nil {
		r.notes = append(r.notes, RunFile+" not read: θ = 1/8 assumed")
		return
	}
	type test struct {
		Theta    float64
		Variance stats.VarianceMethod
	}
	var j struct {
		Plan *struct {
			Options struct {
				Method string `json:"method"`
				Label  string `json:"label"`
			} `json:"options"`
			Schedule *struct {
				SASAPlus, SASA test
				Tail           struct{ Cuts bool }
			} `json:"schedule"`
		} `json:"plan"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		r.notes = append(r.notes, fmt.Sprintf("%s: %v: θ = 1/8 assumed", RunFile, err))
		return
	}
	if j.Plan == nil {
		r.notes = append(r.notes, RunFile+" has no plan: θ = 1/8 assumed")
		return
	}
	r.method, r.label = j.Plan.Options.Method, j.Plan.Options.Label
	if j.Plan.Schedule == nil {
		r.notes = append(r.notes, RunFile+" has no plan.schedule: θ = 1/8 assumed")
		return
	}
	r.cuts = j.Plan.Schedule.Tail.Cuts
	t := j.Plan.Schedule.SASAPlus
	if strings.EqualFold(r.method, "sasa") {
		t = j.Plan.Schedule.SASA
	}
	if t.Theta > 0 && t.Theta <= 1 {
		r.theta = t.Theta
	} else {
		r.notes = append(r.notes, fmt.Sprintf("%s: theta = %v: θ = 1/8 assumed", RunFile, t.Theta))
	}
	if v := t.Variance; v == stats.IID || v == stats.BM || v == stats.OLBM {
		r.variance = v
	}
}

// readEpochs reads epochs.csv by its header names; columns it does not know
// are ignored, and epoch and steps are required.
func readEpochs(path string) ([]epochRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	col := map[string]int{}
	var out []epochRow
	for line := 1; sc.Scan(); line++ {
		cells := strings.Split(strings.TrimRight(sc.Text(), "\r"), ",")
		if line == 1 {
			for i, c := range cells {
				col[strings.TrimSpace(c)] = i
			}
			for _, need := range []string{"epoch", "steps"} {
				if _, ok := col[need]; !ok {
					return nil, fmt.Errorf("plots: %s: header %q has no column %q", path, sc.Text(), need)
				}
			}
			continue
		}
		if len(cells) == 1 && cells[0] == "" {
			continue
		}
		num := func(name string) (float64, error) {
			i, ok := col[name]
			if !ok || i >= len(cells) || strings.TrimSpace(cells[i]) == "" {
				return math.NaN(), nil
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(cells[i]), 64)
			if err != nil {
				return 0, fmt.Errorf("plots: %s: line %d: column %q: %q is not a number", path, line, name, cells[i])
			}
			return v, nil
		}
		var e epochRow
		var v [8]float64
		for i, name := range []string{"epoch", "steps", "lr", "train_loss", "test_loss", "test_acc", "test_ppl", "val_loss"} {
			if v[i], err = num(name); err != nil {
				return nil, err
			}
			if i < 2 && (math.IsNaN(v[i]) || v[i] < 0 || v[i] != math.Trunc(v[i])) {
				return nil, fmt.Errorf("plots: %s: line %d: column %q = %v: must be an integer ≥ 0", path, line, name, v[i])
			}
		}
		e.Epoch, e.Steps = int(v[0]), int(v[1])
		e.LR, e.TrainLoss, e.TestLoss, e.TestAcc, e.TestPPL, e.ValLoss = v[2], v[3], v[4], v[5], v[6], v[7]
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", path, err)
	}
	return out, nil
}

// stepsPerEpoch returns the number of steps in an epoch from epochs.csv, or 0.
func (r *run) stepsPerEpoch() float64 {
	for i := len(r.epochs) - 1; i >= 0; i-- {
		if e := r.epochs[i]; e.Epoch > 0 && e.Steps > 0 {
			return float64(e.Steps) / float64(e.Epoch)
		}
	}
	return 0
}

// title is a run figure's title: what it shows, the run's legend, and
// whether the run stopped with an error.
func (r *run) title(what string) string {
	t := what + " — " + r.legend()
	if r.failed != "" {
		t += " (stopped with an error)"
	}
	return t
}

// legend is the run's name in a comparison: its label, else its method, else
// its directory's name.
func (r *run) legend() string {
	switch {
	case r.label != "":
		return r.label
	case r.method != "":
		return r.method
	}
	return r.name
}

// delta returns Δ_k = x1d + (α_k/2)·d2 for each trace row, as SASA+ forms it.
func delta(rows []trace.Row) []float64 {
	d := make([]float64, len(rows))
	for i, row := range rows {
		d[i] = row.X1D + row.D2*(0.5*row.LR)
	}
	return d
}

// testStats is σ̂_N of each estimator for the window of one test.
type testStats struct {
	step, count int
	std         [3]float64 // IID, BM, OLBM; NaN where the window is too short
}

var methods = [3]stats.VarianceMethod{stats.IID, stats.BM, stats.OLBM}

// rebuildWindows replays the SASA+ window over the trace: Δ_k is pushed at
// every step, the window keeps the most recent ⌈θn⌉ of the n samples since
// the last drop (Algorithm 1), and it is emptied after each drop step. At
// each step listed in tests it evaluates σ̂_N by the three estimators. A
// non-finite Δ is skipped, as the scheduler rejects it.
func rebuildWindows(rows []trace.Row, theta float64, tests, drops map[int]bool) ([]testStats, error) {
	w, err := stats.NewWindow(theta)
	if err != nil {
		return nil, err
	}
	var out []testStats
	for i, d := range delta(rows) {
		step := rows[i].Step
		_ = w.Push(d)
		if tests[step] {
			v := w.Values()
			ts := testStats{step: step, count: len(v)}
			for j, m := range methods {
				ts.std[j] = math.NaN()
				if s, _, err := stats.Std(m, v, stats.Mean(v)); err == nil {
					ts.std[j] = s
				}
			}
			out = append(out, ts)
		}
		if drops[step] {
			w.Reset()
		}
	}
	return out, nil
}
