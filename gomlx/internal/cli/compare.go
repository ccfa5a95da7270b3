package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/salsaopt/salsa/gomlx/internal/compare"
	"github.com/salsaopt/salsa/gomlx/internal/train"
)

func init() {
	commands["compare"] = command{"run methods × lr0s × seeds on one task and report them side by side; --profile: performance profiles over tasks", runCompare}
}

// splitList splits a comma-separated flag value, trimming spaces; an empty
// item is an error naming the flag.
func splitList(flagName, v string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			return nil, fmt.Errorf("--%s %q: empty item", flagName, v)
		}
		out = append(out, s)
	}
	return out, nil
}

// maxSeeds bounds --seeds: a grid of each seed's runs is built up front.
const maxSeeds = 1000

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", stderr)
	cfg := compare.Config{}
	fs.StringVar(&cfg.Dataset, "dataset", "mnist", "dataset: "+strings.Join(train.Datasets, ", "))
	fs.StringVar(&cfg.Model, "model", "logreg", "model (see 'salsa help train')")
	methods := fs.String("methods", "", "comma-separated `methods` to compare (required): "+strings.Join(train.Methods, ", "))
	lr0s := fs.String("lr0s", "", "comma-separated initial learning `rates`: each method runs at each (a row per rate), or a --grid method is tuned over them (default: each method at its own default, 0.01 or a peer's authors' rate)")
	fs.Float64Var(&cfg.LR0, "lr0", 0, "with --grid: the rate of the methods not tuned (default: each method's own, 0.01 or a peer's authors' rate)")
	startLR0s := fs.String("start-lr0s", "", "with --grid: comma-separated `rates` each method not tuned starts from, a row per rate (the zero-tuning check: salsa from 0.001,0.01,0.1 against the tuned rows)")
	fs.IntVar(&cfg.Seeds, "seeds", 1, "seeds 1…`N` of each run (the seed sets the data order, the same for every method)")
	fs.IntVar(&cfg.Epochs, "epochs", 30, "epochs of each run")
	fs.IntVar(&cfg.Batch, "batch", 0, "mini-batch size (0: the model's default)")
	fs.StringVar(&cfg.Preset, "preset", "paper", "defaults: paper or statopt")
	fs.StringVar(&cfg.Engine, "engine", "auto", "engine: auto, gomlx or native")
	fs.IntVar(&cfg.Limit, "limit", 0, "train on the first `N` training examples (tokens) only (0: all)")
	fs.IntVar(&cfg.TestLimit, "test-limit", 0, "evaluate on the first `N` test examples (tokens; for a text, of its validation split too) only (0: all)")
	var sets setFlags
	fs.Var(&sets, "set", "`key=value` hyperparameter, repeatable, for the methods it applies to (see 'salsa help train')")
	sweep := fs.String("sweep", "", "`key=v1,v2,...`: a row per value of a --set key, for the methods it applies to (rows named method[key=v])")
	grid := fs.String("grid", "", "comma-separated `methods` whose lr0 is tuned over --lr0s by the final validation metric (e.g. shb-hand,adam-warmup); every run then holds out a validation split")
	fs.Float64Var(&cfg.HoldOut, "hold-out", 0.1, "fraction of the training examples held out for validation when a run needs it (--grid, -val methods)")
	fs.Float64Var(&cfg.Target, "target", 0, "target test metric for the time to target (default: 99% of the best final accuracy in the grid; 1% above the best perplexity)")
	fs.IntVar(&cfg.Jobs, "jobs", 0, "runs at a time, at most the cores (0: the cores if every run uses the native engine, else 1: a GoMLX run uses 2 cores already)")
	fs.IntVar(&cfg.MaxSteps, "max-steps", 0, "stop each run after `N` steps, for a quick try (the runs resume when the command runs again)")
	fs.StringVar(&cfg.DataDir, "data", "", "data root holding <dataset>/ (default $SALSA_DATA, else the repository's copy)")
	fs.BoolVar(&cfg.Download, "download", false, "download the dataset's missing files")
	fs.StringVar(&cfg.Mirror, "mirror", "", "base `URL` for --download")
	fs.StringVar(&cfg.Out, "out", "", "comparison `directory` (required): runs/<method>-lr<lr0>-s<seed>/, report.md, summary.json, figures")
	profile := fs.String("profile", "", "comma-separated compare `directories` (tasks): draw performance profiles into --out instead of running a grid")
	profileTime := fs.String("profile-time", "seconds", "--profile: time to target in seconds, epochs or steps")
	noPlots := fs.Bool("no-plots", false, "do not draw the figures")
	setUsage(fs, "usage: salsa compare --dataset D --model M --methods a,b,... [--lr0s x,y] [--seeds N] [--epochs E] --out DIR\n"+
		"       salsa compare --profile DIR1,DIR2,... --out P\n"+
		"\nRuns the grid methods × lr0s × seeds (× --sweep values) through salsa train's loop, each run in\n"+
		"DIR/runs/; a finished run is skipped and an interrupted one resumes when the command runs again.\n"+
		"Writes DIR/report.md (a row per method: final and best test metric, time to target, final lr, drops,\n"+
		"switch step, cost per step), DIR/summary.json and overlay figures.")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Out == "" {
		return usageError(fs, "--out is required")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	cfg.HoldOutGiven = given["hold-out"]
	if *profile != "" {
		for name := range given {
			if name != "profile" && name != "profile-time" && name != "out" && name != "no-plots" {
				return usageError(fs, fmt.Sprintf("--profile reads compare directories: --%s does not go with it (only --out and --profile-time)", name))
			}
		}
		return runProfile(*profile, *profileTime, cfg.Out, stdout, *noPlots)
	}
	if given["profile-time"] {
		return usageError(fs, "--profile-time goes with --profile")
	}
	if *methods == "" {
		return usageError(fs, "--methods is required; the methods are "+strings.Join(train.Methods, ", "))
	}
	if cfg.Mirror != "" && !cfg.Download {
		return fmt.Errorf("--mirror %s: is used only with --download", cfg.Mirror)
	}
	var err error
	if cfg.Methods, err = splitList("methods", *methods); err != nil {
		return err
	}
	if cfg.LR0s, err = parseRates("lr0s", *lr0s); err != nil {
		return err
	}
	if cfg.StartLR0s, err = parseRates("start-lr0s", *startLR0s); err != nil {
		return err
	}
	switch {
	case cfg.Seeds < 1 || cfg.Seeds > maxSeeds:
		return fmt.Errorf("--seeds %d: must be in [1, %d]", cfg.Seeds, maxSeeds)
	case cfg.Jobs < 0 || cfg.Jobs > runtime.NumCPU():
		return fmt.Errorf("--jobs %d: must be between 1 and the %d cores (0: automatic)", cfg.Jobs, runtime.NumCPU())
	case !(cfg.HoldOut > 0 && cfg.HoldOut < 1):
		return fmt.Errorf("--hold-out %v: must be in (0, 1)", cfg.HoldOut)
	case cfg.MaxSteps < 0:
		return fmt.Errorf("--max-steps %d: must be ≥ 0", cfg.MaxSteps)
	case given["lr0"] && (!(cfg.LR0 > 0) || math.IsInf(cfg.LR0, 0)): // 0 inside means not given
		return fmt.Errorf("--lr0 %v: must be finite and > 0", cfg.LR0)
	case given["start-lr0s"] && *grid == "":
		return fmt.Errorf("--start-lr0s %s: sets the rates of the methods not tuned by --grid: give --grid, or --lr0s %s", *startLR0s, *startLR0s)
	case given["start-lr0s"] && given["lr0"]:
		return fmt.Errorf("--start-lr0s %s and --lr0 %v both set the rate of the methods not tuned: give one", *startLR0s, cfg.LR0)
	case given["lr0"] && *grid == "":
		return fmt.Errorf("--lr0 %v: sets the rate of the methods not tuned by --grid: give --grid, or --lr0s %v", cfg.LR0, cfg.LR0)
	case cfg.Target < 0 || math.IsNaN(cfg.Target) || math.IsInf(cfg.Target, 0):
		return fmt.Errorf("--target %v: must be finite and > 0", cfg.Target)
	case cfg.Target > 1 && !train.IsText(cfg.Dataset):
		return fmt.Errorf("--target %v: an accuracy target must be in (0, 1]", cfg.Target)
	case given["target"] && cfg.Target == 0:
		return fmt.Errorf("--target 0: must be > 0 (leave it out for the default)")
	}
	if *grid != "" {
		if cfg.Grid, err = splitList("grid", *grid); err != nil {
			return err
		}
	}
	if *sweep != "" {
		k, vs, ok := strings.Cut(*sweep, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("--sweep %q: want key=v1,v2,...", *sweep)
		}
		if _, known := train.SetKeys()[k]; !known {
			return fmt.Errorf("--sweep %s: unknown key %q; the keys are %s", *sweep, k, strings.Join(train.SortedSetKeys(), ", "))
		}
		if cfg.SweepVals, err = splitList("sweep", vs); err != nil {
			return err
		}
		cfg.SweepKey = k
	}
	cfg.Sets = sets.pairs()
	for _, kv := range cfg.Sets {
		if cfg.SweepKey != "" && kv[0] == cfg.SweepKey {
			return fmt.Errorf("--sweep %s and --set %s=%s both set %s: give one", *sweep, kv[0], kv[1], kv[0])
		}
		if kv[0] == "val_fraction" { // one held-out split for every run that needs one
			return fmt.Errorf("--set val_fraction=%s: salsa compare holds out --hold-out (%v) of the training examples for every run that needs a validation split: give --hold-out %s", kv[1], cfg.HoldOut, kv[1])
		}
	}
	if !simdBuild {
		fmt.Fprintln(stderr, "warning: this salsa binary was built without GOEXPERIMENT=simd: GoMLX's kernels run about 17× slower")
	}
	g, err := compare.NewGrid(cfg)
	if err != nil {
		return err
	}
	unlock, err := lockDir("out", cfg.Out)
	if err != nil {
		return err
	}
	defer unlock()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := g.Prepare(ctx, stderr); err != nil {
		return err
	}
	for _, n := range g.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	fresh, resume, done, failed := g.Pending()
	jobs := cfg.Jobs
	if jobs == 0 {
		jobs = g.DefaultJobs()
	}
	if fresh+resume == 0 {
		also := ""
		if failed > 0 {
			also = fmt.Sprintf(" (%d failed before: remove a run's failed.txt to try it again)", failed)
		}
		fmt.Fprintf(stderr, "compare: %d runs in %s: all finished before%s, nothing to train\n", len(g.Jobs), cfg.Out, also)
	} else {
		fmt.Fprintf(stderr, "compare: %d runs in %s: %d to train, %d to resume, %d finished before (skipped), %d failed before (skipped); %d at a time\n",
			len(g.Jobs), filepath.Join(cfg.Out, "runs"), fresh, resume, done, failed, min(jobs, fresh+resume))
	}
	out, err := g.Execute(ctx, jobs, compare.NewProgress(stderr, isTerminal(stderr)))
	stop()
	if err != nil {
		return err
	}
	if out.Interrupted {
		return fmt.Errorf("interrupted: the runs in progress wrote their checkpoints; run the same command again to go on")
	}
	if out.Stopped > 0 {
		fmt.Fprintf(stdout, "%d run(s) stopped at --max-steps %d; run the command again without --max-steps to finish them (no report until then)\n", out.Stopped, cfg.MaxSteps)
		return nil
	}
	if out.Failed > 0 {
		fmt.Fprintf(stderr, "compare: %d run(s) failed (their failed.txt says why); the report counts them as not reaching the target\n", out.Failed)
	}
	s, err := g.Summarize()
	if err != nil {
		return err
	}
	if err := g.WriteReport(s); err != nil {
		return err
	}
	for _, rs := range s.Rows {
		if w := rs.EdgeWarning(); w != "" {
			fmt.Fprintln(stderr, "compare: warning: "+w)
		}
	}
	fmt.Fprintf(stdout, "trained %d, resumed %d, skipped %d (finished before), failed %d", out.Trained, out.Resumed, done, out.Failed)
	if failed > 0 {
		fmt.Fprintf(stdout, ", skipped %d (failed before)", failed)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, filepath.Join(cfg.Out, "report.md"))
	fmt.Fprintln(stdout, filepath.Join(cfg.Out, compare.SummaryFile))
	if !*noPlots {
		d, err := g.DrawFigures()
		for _, f := range d.Files {
			fmt.Fprintln(stdout, f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "salsa compare: figures: %v\n", err)
		}
	}
	return nil
}

// runProfile draws performance profiles over the compare directories.
func runProfile(dirsFlag, unit, out string, stdout io.Writer, noPlots bool) error {
	if unit != "seconds" && unit != "epochs" && unit != "steps" {
		return fmt.Errorf("--profile-time %s: must be seconds, epochs or steps", unit)
	}
	dirs, err := splitList("profile", dirsFlag)
	if err != nil {
		return err
	}
	var sums []*compare.Summary
	for _, d := range dirs {
		s, err := compare.ReadSummary(d)
		if err != nil {
			return err
		}
		sums = append(sums, s)
	}
	p := compare.NewProfile(dirs, sums, unit)
	if noPlots {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		path := filepath.Join(out, "profile.md")
		fmt.Fprintln(stdout, path)
		return os.WriteFile(path, []byte(p.Table()), 0o644)
	}
	d, err := p.WriteProfile(out)
	for _, f := range d.Files {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// parseRates parses a comma-separated list of distinct finite rates > 0
// given to --flag ("" gives nil).
func parseRates(flag, list string) ([]float64, error) {
	if list == "" {
		return nil, nil
	}
	items, err := splitList(flag, list)
	if err != nil {
		return nil, err
	}
	var rates []float64
	for _, s := range items {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--%s %s: %q: each rate must be a finite number > 0", flag, list, s)
		}
		if slices.Contains(rates, v) {
			return nil, fmt.Errorf("--%s %s: %s is listed twice", flag, list, s)
		}
		rates = append(rates, v)
	}
	return rates, nil
}
