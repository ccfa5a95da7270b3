// Package compare runs a grid of salsa training runs (methods × initial
// learning rates × seeds, and a hyperparameter sweep) through train.Run,
// each in its own directory, skipping the finished runs and resuming the
// interrupted ones; it tunes the chosen methods' lr0 on validation, writes
// a report with one row per method, overlay figures, and performance
// profiles over several comparisons.
package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/schedule"
)

// Config is what salsa compare was asked for.
type Config struct {
	Dataset, Model, Preset, Engine  string
	Methods                         []string  // as typed, each in train.Methods
	LR0s                            []float64 // nil: each method at DefaultLR0
	LR0                             float64   // > 0 (with Grid): the untuned methods run at this rate, else at DefaultLR0
	StartLR0s                       []float64 // with Grid: the untuned methods run from each of these rates, a row per rate
	Seeds                           int       // seeds 1…Seeds
	Epochs, Batch, Limit, TestLimit int
	Sets                            [][2]string // --set, for the methods each key applies to
	SweepKey                        string      // --sweep key=v1,v2,…: one row per value
	SweepVals                       []string
	Grid                            []string // methods whose lr0 is tuned over LR0s on validation
	HoldOut                         float64  // the validation fraction, when some run needs one
	HoldOutGiven                    bool     // --hold-out was given: an error where no run would use it
	Target                          float64  // > 0: the target of the test metric; 0: the default
	Jobs                            int      // runs at a time; 0: the cores for native runs, else 1
	MaxSteps                        int      // > 0: stop each run after this many steps (resumable)
	DataDir, Mirror                 string
	Download                        bool
	Out                             string
}

// Row is a row of the report: a method (with a sweep value, or an lr0 when
// the method runs at several), over the seeds.
type Row struct {
	Name   string // the method as typed, with [lr0=…,key=…]
	Method string
	Sweep  string      // the sweep's value; "" if the row is not swept
	Sets   [][2]string // the --set pairs of its runs
	LR0s   []float64   // tuned: the candidates; else the one rate
	Tuned  bool
	Chosen float64 // the lr0 whose seeds the row reports
	// Runs are the row's runs at each lr0, in seed order.
	Runs map[float64][]*Job
}

// Job is one training run of the grid.
type Job struct {
	Row  *Row
	LR0  float64
	Seed uint64
	Name string // its directory under runs/
	Dir  string
	Opts train.Options

	plan   *train.Plan
	state  state
	failed string // why it failed before (failed.txt), or now
	Result *RunResult
}

type state int

const (
	stateNew state = iota
	stateResume
	stateDone
	stateFailed
)

// RecordFailure leaves the error a run stopped with in its directory
// (plots.FailedFile: a NaN loss at a large lr0, say), where salsa compare
// finds it and does not run it again until the file is removed, and salsa
// plot and salsa eval name it. With runErr nil it removes the file: the run
// in dir has since ended clean (salsa train, resumed or trained again).
func RecordFailure(dir string, runErr error) error {
	path := filepath.Join(dir, plots.FailedFile)
	if runErr != nil {
		return os.WriteFile(path, []byte(runErr.Error()+"\n"), 0o644)
	}
	if err := os.Remove(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Grid is the whole comparison.
type Grid struct {
	Cfg   Config
	Rows  []*Row
	Jobs  []*Job
	Notes []string // what the report should say about the settings

	oldSchedule []string // runs found whose recorded schedule is not the one planned now

	sources map[uint64]*train.Source
	splits  map[string][3]*train.Split
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// dirPart makes a sweep value safe in a directory name.
func dirPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".+-_=", r) {
			return r
		}
		return '_'
	}, s)
}

// DefaultLR0 is a method's rate when --lr0s is not given (or, with --grid,
// an untuned method's): its authors' for the learning-rate-free and
// schedule-free peers, Adam's 1e-3 for adam-warmup, else salsa train's
// default 0.01.
func DefaultLR0(method string) float64 {
	if lr, ok := train.MethodLR0(method); ok {
		return lr
	}
	return 0.01
}

// NewGrid lays out the rows and the runs. It checks the methods and the keys
// of --set and --sweep against each method.
func NewGrid(cfg Config) (*Grid, error) {
	g := &Grid{Cfg: cfg, sources: map[uint64]*train.Source{}, splits: map[string][3]*train.Split{}}
	if len(cfg.Methods) == 0 {
		return nil, errors.New("--methods: give at least one method")
	}
	for i, m := range cfg.Methods {
		if !slices.Contains(train.Methods, m) {
			return nil, fmt.Errorf("--methods %s: unknown method %q; the methods are %s", strings.Join(cfg.Methods, ","), m, strings.Join(train.Methods, ", "))
		}
		if slices.Contains(cfg.Methods[:i], m) {
			return nil, fmt.Errorf("--methods %s: %s is listed twice", strings.Join(cfg.Methods, ","), m)
		}
	}
	for _, m := range cfg.Grid {
		if !slices.Contains(cfg.Methods, m) {
			return nil, fmt.Errorf("--grid %s: %s is not one of --methods %s", strings.Join(cfg.Grid, ","), m, strings.Join(cfg.Methods, ","))
		}
	}
	if len(cfg.Grid) > 0 && len(cfg.LR0s) < 2 {
		return nil, fmt.Errorf("--grid %s tunes lr0 over --lr0s: give ≥ 2 rates (got %d)", strings.Join(cfg.Grid, ","), len(cfg.LR0s))
	}
	// The keys of --set and --sweep apply to the methods they do something
	// for, given the other keys of the run (rowSets); a key that applies to
	// none is an error.
	sweepVals := []string{""}
	if cfg.SweepKey != "" {
		sweepVals = cfg.SweepVals
	}
	rowSets := func(sv string) [][2]string {
		if sv == "" {
			return cfg.Sets
		}
		return append(slices.Clone(cfg.Sets), [2]string{cfg.SweepKey, sv})
	}
	applies := func(key, m string) bool {
		for _, sv := range sweepVals {
			if train.SetApplies(key, m, rowSets(sv)) == nil {
				return true
			}
		}
		return false
	}
	appliesTo := func(key string) (yes, no []string) {
		for _, m := range cfg.Methods {
			if applies(key, m) {
				yes = append(yes, m)
			} else {
				no = append(no, m)
			}
		}
		return yes, no
	}
	for _, kv := range cfg.Sets {
		yes, no := appliesTo(kv[0])
		if len(yes) == 0 {
			return nil, fmt.Errorf("--set %s=%s: %v", kv[0], kv[1], train.SetApplies(kv[0], cfg.Methods[0], cfg.Sets))
		}
		if len(no) > 0 {
			g.Notes = append(g.Notes, fmt.Sprintf("--set %s=%s applies to %s only; %s run without it", kv[0], kv[1], strings.Join(yes, ", "), strings.Join(no, ", ")))
		}
		if kv[0] == cfg.SweepKey {
			return nil, fmt.Errorf("--set %s and --sweep %s: the sweep sets %s; give it once", kv[0], cfg.SweepKey, kv[0])
		}
	}
	if cfg.SweepKey != "" {
		yes, no := appliesTo(cfg.SweepKey)
		if len(yes) == 0 {
			return nil, fmt.Errorf("--sweep %s: %v", cfg.SweepKey, train.SetApplies(cfg.SweepKey, cfg.Methods[0], rowSets(sweepVals[0])))
		}
		if len(no) > 0 {
			g.Notes = append(g.Notes, fmt.Sprintf("--sweep %s applies to %s only; %s run once, without it", cfg.SweepKey, strings.Join(yes, ", "), strings.Join(no, ", ")))
		}
	}
	for _, m := range cfg.Methods {
		tuned := slices.Contains(cfg.Grid, m)
		var lrSets [][]float64
		switch {
		case tuned:
			lrSets = [][]float64{cfg.LR0s}
		case len(cfg.StartLR0s) > 0:
			for _, lr := range cfg.StartLR0s {
				lrSets = append(lrSets, []float64{lr})
			}
		case cfg.LR0 > 0:
			lrSets = [][]float64{{cfg.LR0}}
		case len(cfg.Grid) > 0 || len(cfg.LR0s) == 0:
			lrSets = [][]float64{{DefaultLR0(m)}}
		default:
			for _, lr := range cfg.LR0s {
				lrSets = append(lrSets, []float64{lr})
			}
		}
		sweep := []string{""}
		if cfg.SweepKey != "" && applies(cfg.SweepKey, m) {
			sweep = cfg.SweepVals
		}
		for _, lrs := range lrSets {
			for _, sv := range sweep {
				r := &Row{Method: m, Sweep: sv, LR0s: lrs, Tuned: tuned, Chosen: lrs[0], Runs: map[float64][]*Job{}}
				var parts []string
				if !tuned && len(lrSets) > 1 {
					parts = append(parts, "lr0="+fmtFloat(lrs[0]))
				}
				for _, kv := range cfg.Sets {
					if train.SetApplies(kv[0], m, rowSets(sv)) == nil {
						r.Sets = append(r.Sets, kv)
					} else if note := fmt.Sprintf("--set %s=%s does nothing for %s with %s=%s; those runs go without it", kv[0], kv[1], m, cfg.SweepKey, sv); applies(kv[0], m) && !slices.Contains(g.Notes, note) {
						g.Notes = append(g.Notes, note) // once, not once per lr0's row
					}
				}
				if sv != "" {
					parts = append(parts, cfg.SweepKey+"="+sv)
					r.Sets = append(r.Sets, [2]string{cfg.SweepKey, sv})
				}
				r.Name = m
				if len(parts) > 0 {
					r.Name += "[" + strings.Join(parts, ",") + "]"
				}
				g.Rows = append(g.Rows, r)
				for _, lr := range lrs {
					for s := 1; s <= cfg.Seeds; s++ {
						name := m + "-lr" + fmtFloat(lr)
						if sv != "" {
							name += "-" + dirPart(cfg.SweepKey+sv)
						}
						name += "-s" + strconv.Itoa(s)
						label := r.Name
						if tuned {
							label = m + "[" + strings.Join(append([]string{"lr0=" + fmtFloat(lr)}, parts...), ",") + "]"
						}
						j := &Job{Row: r, LR0: lr, Seed: uint64(s), Name: name, Dir: filepath.Join(cfg.Out, "runs", name)}
						j.Opts = train.Options{Dataset: cfg.Dataset, Model: cfg.Model, Method: m, Preset: cfg.Preset, LR0: lr,
							Epochs: cfg.Epochs, Batch: cfg.Batch, Seed: uint64(s), Engine: cfg.Engine, Label: label,
							Limit: cfg.Limit, TestLimit: cfg.TestLimit, Sets: slices.Clone(r.Sets)}
						j.Opts.FillDefaults()
						r.Runs[lr] = append(r.Runs[lr], j)
						g.Jobs = append(g.Jobs, j)
					}
				}
			}
		}
	}
	dirs := map[string]*Job{}
	for _, j := range g.Jobs {
		if err := j.Opts.Validate(); err != nil {
			return nil, err
		}
		// Two runs in one directory would overwrite each other's logs
		// (a --sweep value given twice, say).
		if o := dirs[j.Dir]; o != nil {
			return nil, fmt.Errorf("runs %s and %s would share the directory %s: is a value listed twice (--sweep %s=%s)?",
				o.Row.Name, j.Row.Name, j.Dir, cfg.SweepKey, strings.Join(cfg.SweepVals, ","))
		}
		dirs[j.Dir] = j
	}
	return g, nil
}

// source loads the dataset once (cifar10-synthetic: once per seed, as its
// data come from the seed).
func (g *Grid) source(ctx context.Context, seed uint64, log io.Writer) (*train.Source, error) {
	key := uint64(0)
	if g.Cfg.Dataset == "cifar10-synthetic" {
		key = seed
	}
	if s, ok := g.sources[key]; ok {
		return s, nil
	}
	s, err := train.Load(ctx, g.Cfg.DataDir, g.Cfg.Dataset, g.Cfg.Download, g.Cfg.Mirror, seed, log)
	if err != nil {
		return nil, err
	}
	g.sources[key] = s
	return s, nil
}

// Prepare loads the data, resolves every run's plan and finds which runs
// are finished, which resume and which start. When some run needs a
// validation split (a tuned method, or a method that validates), every run
// holds out the same one, so that all train on the same examples in the
// same order.
func (g *Grid) Prepare(ctx context.Context, log io.Writer) error {
	plan := func(j *Job) error {
		src, err := g.source(ctx, j.Seed, log)
		if err != nil {
			return err
		}
		p, err := train.NewPlan(j.Opts, src.NTrain())
		if err != nil {
			return fmt.Errorf("%s: %w", j.Row.Name, err)
		}
		p.Data = src.Files()
		j.plan = p
		return nil
	}
	needVal := len(g.Cfg.Grid) > 0
	for _, j := range g.Jobs {
		if err := plan(j); err != nil {
			return err
		}
		needVal = needVal || j.plan.ValFraction > 0
	}
	switch {
	case g.Cfg.HoldOutGiven && train.IsText(g.Cfg.Dataset):
		return fmt.Errorf("--hold-out %v: a text validates on its own validation split; --hold-out applies to images", g.Cfg.HoldOut)
	case g.Cfg.HoldOutGiven && !needVal:
		return fmt.Errorf("--hold-out %v: no run here uses a validation split (--grid, a -val method, plateau, salsa-probe, or --set probe_val=1 or average=1 would)", g.Cfg.HoldOut)
	}
	if needVal {
		for _, j := range g.Jobs {
			j.Opts.HoldOut = g.Cfg.HoldOut
			if err := plan(j); err != nil {
				return err
			}
		}
		note := fmt.Sprintf("Validation: %.3g of the training examples (the last ones) are held out as a validation split in every run, so that all train on the same examples in the same order.", g.Cfg.HoldOut)
		if train.IsText(g.Cfg.Dataset) {
			note = "Validation: every run evaluates the text's validation split at each epoch's end."
		}
		g.Notes = append(g.Notes, note)
	}
	for _, j := range g.Jobs {
		if err := g.findState(j); err != nil {
			return err
		}
	}
	if n := len(g.oldSchedule); n > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d run(s) begun before with the same options were planned with another schedule than their method plans now, "+
			"and keep the one they recorded: %s; remove a run's directory to train it with today's", n, strings.Join(g.oldSchedule, ", ")))
	}
	return nil
}

// findState compares a run directory's checkpoint with the run asked for.
func (g *Grid) findState(j *Job) error {
	if b, err := os.ReadFile(filepath.Join(j.Dir, plots.FailedFile)); err == nil {
		j.state, j.failed = stateFailed, strings.TrimSpace(string(b))
		return nil
	}
	if _, err := os.Stat(filepath.Join(j.Dir, "checkpoint.gob")); err != nil {
		if err := train.CheckNoStrayLogs(j.Dir); err != nil {
			return fmt.Errorf("--out %s: run %w", g.Cfg.Out, err)
		}
		j.state = stateNew
		return nil
	}
	ck, err := train.ReadCheckpoint(j.Dir)
	if err != nil {
		return fmt.Errorf("--out %s: run %s: %w", g.Cfg.Out, j.Dir, err)
	}
	want := j.plan.Options
	if e, err := train.ChooseEngine(j.plan); err == nil {
		want.Engine = e
	}
	if diff := fieldsDiff(ck.Plan.Options, want); diff != "" {
		return fmt.Errorf("--out %s: %s holds a run with other settings (%s): give another --out, or remove that directory", g.Cfg.Out, j.Dir, diff)
	}
	if diff := fieldsDiff(ck.Plan.Schedule, j.plan.Schedule); diff != "" {
		// the same options, but the method fixes more now (salsa-probe took
		// the warm-up guard): the run goes on with the schedule it recorded
		g.oldSchedule = append(g.oldSchedule, fmt.Sprintf("%s (%s)", j.Name, diff))
	}
	j.plan = &ck.Plan
	if ck.Epoch > ck.Plan.Options.Epochs {
		j.state = stateDone
	} else {
		j.state = stateResume
	}
	return nil
}

// fieldsDiff lists the fields of two values of one type that differ (a
// run's options or schedule against ours), by their JSON names
// ("Tail.WarmupGuard" in a nested object), as "key: have's, here want's".
func fieldsDiff(have, want any) string {
	h, w := map[string]any{}, map[string]any{}
	flatten(jsonObject(have), "", h)
	flatten(jsonObject(want), "", w)
	keys := map[string]bool{}
	for k := range h {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		hs, ws := fmt.Sprint(h[k]), fmt.Sprint(w[k])
		if h[k] == nil {
			hs = "unset"
		}
		if w[k] == nil {
			ws = "unset"
		}
		if hs != ws {
			diffs = append(diffs, fmt.Sprintf("%s: %s, here %s", k, hs, ws))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// jsonObject is v, a struct, as its JSON object; a value JSON cannot
// carry (a NaN field) is kept whole under "", so that fieldsDiff still
// compares it.
func jsonObject(v any) map[string]any {
	var m map[string]any
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		return map[string]any{"": v}
	}
	return m
}

// flatten puts m's fields into into, a nested object's under
// "prefix.Name"; arrays stay whole.
func flatten(m map[string]any, prefix string, into map[string]any) {
	for k, x := range m {
		if prefix != "" {
			k = prefix + "." + k
		}
		if sub, ok := x.(map[string]any); ok {
			flatten(sub, k, into)
		} else {
			into[k] = x
		}
	}
}

// splitsFor returns the splits of a plan, made once for all plans that
// split the data alike (the engines only read them).
func (g *Grid) splitsFor(j *Job) (tr, val, test *train.Split, err error) {
	p := j.plan
	key := fmt.Sprint(p.Options.Seed*boolU(g.Cfg.Dataset == "cifar10-synthetic"), p.NTrain, p.NVal, p.Options.TestLimit)
	if s, ok := g.splits[key]; ok {
		if s[2] != nil {
			p.NTest = s[2].N()
		}
		return s[0], s[1], s[2], nil
	}
	src := g.sources[0]
	if g.Cfg.Dataset == "cifar10-synthetic" {
		src = g.sources[p.Options.Seed]
	}
	if tr, val, test, err = train.Splits(src, p); err != nil {
		return nil, nil, nil, err
	}
	g.splits[key] = [3]*train.Split{tr, val, test}
	return tr, val, test, nil
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Pending counts the runs to train, to resume, done and failed before.
func (g *Grid) Pending() (fresh, resume, done, failed int) {
	for _, j := range g.Jobs {
		switch j.state {
		case stateNew:
			fresh++
		case stateResume:
			resume++
		case stateDone:
			done++
		case stateFailed:
			failed++
		}
	}
	return
}

// DefaultJobs is the number of runs at a time when --jobs is not given: the
// cores when every run uses the native engine (one core each), else 1 (a
// GoMLX run uses several cores already).
func (g *Grid) DefaultJobs() int {
	for _, j := range g.Jobs {
		if e, err := train.ChooseEngine(j.plan); err != nil || e != "native" {
			return 1
		}
	}
	return runtime.NumCPU()
}

// Outcome says how Execute ended.
type Outcome struct {
	Trained, Resumed, Skipped, Failed int
	Stopped                           int  // runs stopped by MaxSteps
	Interrupted                       bool // ctx was done: some runs stopped at a checkpoint
}

// Execute trains the runs that are not finished, jobs at a time, reporting
// to pr.
func (g *Grid) Execute(ctx context.Context, jobs int, pr *Progress) (Outcome, error) {
	var out Outcome
	var todo []*Job
	for _, j := range g.Jobs {
		if j.state == stateNew || j.state == stateResume {
			todo = append(todo, j)
		}
	}
	out.Skipped = len(g.Jobs) - len(todo)
	// The splits are made here, before the workers start, so that they
	// share them without locks.
	for _, j := range todo {
		if _, _, _, err := g.splitsFor(j); err != nil {
			return out, err
		}
	}
	pr.start(len(g.Jobs), out.Skipped)
	ch := make(chan *Job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(jobs, len(todo))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if ctx.Err() != nil { // interrupted before the run started: it stays as it was
					mu.Lock()
					out.Interrupted = true
					mu.Unlock()
					continue
				}
				res, err := g.runJob(ctx, j, pr)
				mu.Lock()
				switch {
				case err != nil:
					out.Failed++
				case res.Interrupted:
					out.Interrupted = true
				case res.Stopped:
					out.Stopped++
				case j.state == stateResume:
					out.Resumed++
				default:
					out.Trained++
				}
				mu.Unlock()
				pr.finished(j, res, err)
			}
		}()
	}
	for _, j := range todo {
		if ctx.Err() != nil {
			out.Interrupted = true
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	pr.end()
	return out, nil
}

// runJob trains one run, logging its epochs to train.log in its directory.
// A run that fails gets a failed.txt with the error.
func (g *Grid) runJob(ctx context.Context, j *Job, pr *Progress) (*train.Result, error) {
	tr, val, test, err := g.splitsFor(j)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(j.Dir, "train.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p := j.plan
	pr.begin(j)
	progress := func(epoch, pos int, _ schedule.Result, _ float64) { pr.step(j, epoch, p.Options.Epochs) }
	// a run to resume reads its checkpoint again here rather than keep the
	// one findState read: a grid of interrupted runs would hold all of them
	var from *train.Checkpoint
	if j.state == stateResume {
		from, err = train.ReadCheckpoint(j.Dir)
	}
	var res *train.Result
	if err == nil {
		res, err = train.Run(ctx, p, j.Dir, from, g.Cfg.MaxSteps, tr, val, test, progress, logf)
	}
	if err != nil {
		j.failed = err.Error()
		fmt.Fprintln(logf, "failed: "+j.failed)
		if ctx.Err() == nil {
			_ = RecordFailure(j.Dir, err)
		}
		return nil, err
	}
	return res, nil
}
