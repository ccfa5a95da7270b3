package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/gomlx/internal/compare"
	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/schedule"
)

func init() {
	commands["train"] = command{"train a model (MNIST logistic regression by default) with SALSA or a baseline", runTrain}
}

// intList parses --drops 10,20.
type intList []int

func (l *intList) String() string { return fmt.Sprint(*l) }
func (l *intList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			return fmt.Errorf("%q: an empty item (give epochs, as in 10,20; without --drops shb-hand cuts after one and two thirds of --epochs)", v)
		}
		i, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("%q is not an integer epoch", f)
		}
		*l = append(*l, i)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// resumeFlags checks the flags given with --resume against the run's: a
// flag that would change the run is refused (a resumed run keeps its
// settings); --epochs sets the run's new length, which may extend a
// finished run.
func resumeFlags(fs *flag.FlagSet, o train.Options, drops intList, sets setFlags, p *train.Plan, ck *train.Checkpoint, out string, stderr io.Writer) error {
	ro := p.Options
	var conflicts []string
	epochsSet := false
	fs.Visit(func(f *flag.Flag) {
		var given, run string
		switch f.Name {
		case "epochs":
			epochsSet = true
			return
		case "out", "resume", "max-steps", "data", "download", "mirror", "no-plots", "cpuprofile":
			return // where and how this invocation runs, not the run's settings
		case "dataset":
			given, run = o.Dataset, ro.Dataset
		case "model":
			given, run = o.Model, ro.Model
		case "method":
			given, run = o.Method, ro.Method
		case "preset":
			given, run = o.Preset, ro.Preset
		case "lr0":
			given, run = fmt.Sprint(o.LR0), fmt.Sprint(ro.LR0)
		case "batch":
			given, run = fmt.Sprint(o.Batch), fmt.Sprint(ro.Batch)
		case "seed":
			given, run = fmt.Sprint(o.Seed), fmt.Sprint(ro.Seed)
		case "engine":
			if o.Engine == "auto" {
				return
			}
			given, run = o.Engine, ro.Engine
		case "label":
			given, run = o.Label, ro.Label
		case "limit":
			given, run = fmt.Sprint(o.Limit), fmt.Sprint(ro.Limit)
		case "test-limit":
			given, run = fmt.Sprint(o.TestLimit), fmt.Sprint(ro.TestLimit)
		case "drops":
			given, run = fmt.Sprint([]int(drops)), fmt.Sprint(ro.Drops)
		case "set":
			given, run = fmt.Sprint(sets.pairs()), fmt.Sprint(ro.Sets)
		default:
			given, run = f.Value.String(), "?"
		}
		if given != run {
			conflicts = append(conflicts, fmt.Sprintf("--%s %s (the run has %s)", f.Name, given, run))
		}
	})
	if len(conflicts) > 0 {
		return fmt.Errorf("--resume: %s: a resumed run keeps its settings; to train with others, start a new run with another --out", strings.Join(conflicts, ", "))
	}
	if !epochsSet || o.Epochs == ro.Epochs {
		return nil
	}
	done := len(ck.Epochs)
	if o.Epochs < max(done, 1) {
		return fmt.Errorf("--resume --epochs %d: the run in %s has completed %d epochs already (give ≥ %d)", o.Epochs, out, done, max(done, 1))
	}
	fmt.Fprintf(stderr, "salsa train: --epochs %d: the run goes on to epoch %d (it was set to %d)\n", o.Epochs, o.Epochs, ro.Epochs)
	switch {
	case ro.Method == "shb-hand":
		fmt.Fprintf(stderr, "warning: --epochs: shb-hand keeps the cuts it was given for --epochs %d (after epochs %v)\n", ro.Epochs, ro.Drops)
	case ro.Method == "adam-warmup":
		fmt.Fprintf(stderr, "warning: --epochs: adam-warmup keeps the warmup it was given for --epochs %d (%.3g epochs)\n", ro.Epochs, p.WarmupEpochs)
	case schedule.NeedsBudget(p.Scheduler): // SetBudget gives each the same budget
		fmt.Fprintf(stderr, "warning: --epochs: %s keeps the budget it was given for --epochs %d (%d steps); the steps past it keep its last rate\n",
			ro.Method, ro.Epochs, p.Schedule.Tail.Steps)
	}
	p.Options.Epochs = o.Epochs
	return nil
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	o := train.Options{}
	fs.StringVar(&o.Dataset, "dataset", "mnist", "dataset: "+strings.Join(train.Datasets, ", ")+" (text datasets go with the lstm models)")
	var modelHelp []string
	for _, m := range train.Models {
		modelHelp = append(modelHelp, m.Name+" ("+m.Help+")")
	}
	fs.StringVar(&o.Model, "model", "logreg", "model: "+strings.Join(modelHelp, "; "))
	fs.StringVar(&o.Method, "method", "salsa", "method: "+strings.Join(train.Methods, ", ")+
		" (shb-hand runs at --lr0 and needs a tuned one; salsa starts from any small --lr0; salsa-budget is salsa whose rate decays linearly to 0 from its switch to the end of the budget, --epochs (from 80% of it at the latest); salsa-probe is salsa-budget whose rate probe doubles SSLS's settled rate every 5% of the budget while the loss allows, keeping the parameters to roll back a failed rate and stopping before a window projected to double ‖x‖², before the decay, and ends at the average of the decay's iterates where a paired test on a validation split (on images --set val_fraction of the training set) says it is better (docs/parity); the peers are listed below)")
	fs.StringVar(&o.Preset, "preset", "paper", "defaults: paper (Table 1, §3, BM variance) or statopt (the authors' released code)")
	fs.Float64Var(&o.LR0, "lr0", 0.01, "initial learning rate (SALSA's starting point; the hand schedule's rate); "+
		"the learning-rate-free and schedule-free peers default to their authors' lr (below), adam-warmup to Adam's 1e-3; --lr0 replaces these")
	fs.IntVar(&o.Epochs, "epochs", 30, "epochs")
	fs.IntVar(&o.Batch, "batch", 0, "mini-batch size (0: the model's default: 128 for images, 32 for lstm, 20 for lstm-paper)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the per-epoch shuffles of an image set, and of the model's initial weights, dropout and augmentation")
	fs.StringVar(&o.Engine, "engine", "auto", "engine: auto (native for logreg, unless --set decay=weights or clip needs gomlx; else gomlx), gomlx or native")
	fs.StringVar(&o.Label, "label", "", "legend label for plots (default: the method)")
	fs.IntVar(&o.Limit, "limit", 0, "train on the first `N` training examples (tokens for a text) only, for a quick try (0: all)")
	fs.IntVar(&o.TestLimit, "test-limit", 0, "evaluate on the first `N` test examples (tokens for a text, whose validation split it limits too) only, to make each epoch's evaluation cheaper (0: all)")
	var drops intList
	fs.Var(&drops, "drops", "shb-hand: comma-separated `epochs` after which the rate is cut by τ (default: after one and two thirds of --epochs)")
	var sets setFlags
	fs.Var(&sets, "set", "`key=value` hyperparameter, repeatable (see 'salsa help train')")
	out := fs.String("out", "", "run `directory` (required)")
	resume := fs.Bool("resume", false, "continue the run in --out from its last checkpoint, with its settings (--epochs N trains on to epoch N, also after the run finished)")
	maxSteps := fs.Int("max-steps", 0, "stop after this many steps in all, for a quick try (the run can be resumed)")
	dataDir := fs.String("data", "", "data root holding <dataset>/ (default $SALSA_DATA, else the copy in the repository)")
	download := fs.Bool("download", false, "download the dataset's missing files (verified by SHA-256)")
	mirror := fs.String("mirror", "", "base `URL` for --download (default: the dataset's usual mirror)")
	noPlots := fs.Bool("no-plots", false, "do not draw the figures")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the training (data loading and figures left out) to `file`, for go tool pprof (-tags splits it by phase of the step: step, grad, trial, update, eval, refresh)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: salsa train --dataset mnist --model logreg --method M --lr0 X --epochs N --batch B --seed S --out DIR")
		fmt.Fprintln(w, "       salsa train --resume --out DIR")
		fs.PrintDefaults()
		fmt.Fprintln(w, "\npeer methods, at their authors' defaults (every model; on the gomlx engine the learning-rate-free and schedule-free directions run on the host):")
		fmt.Fprint(w, train.MethodsHelp())
		fmt.Fprintln(w, "\n--set keys:")
		keys := train.SetKeys()
		for _, k := range train.SortedSetKeys() {
			fmt.Fprintf(w, "  %-16s %s\n", k, keys[k])
		}
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError(fs, "--out is required")
	}
	if *maxSteps < 0 {
		return fmt.Errorf("--max-steps %d: must be ≥ 0", *maxSteps)
	}
	if *mirror != "" && !*download {
		return fmt.Errorf("--mirror %s: is used only with --download", *mirror)
	}
	if !simdBuild {
		fmt.Fprintln(stderr, "warning: this salsa binary was built without GOEXPERIMENT=simd: GoMLX's kernels run about 17× slower (build with GOEXPERIMENT=simd and Go 1.27)")
	}
	var p *train.Plan
	var ck *train.Checkpoint
	var unlock func()
	if *resume {
		var err error
		// the lock before the checkpoint is read: a command still writing
		// there is named, not its half-written checkpoint (no directory:
		// ReadCheckpoint says so, and none is made)
		if _, err := os.Stat(*out); err == nil {
			if unlock, err = lockDir("out", *out); err != nil {
				return err
			}
			defer unlock()
		}
		if ck, err = train.ReadCheckpoint(*out); err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		pl := ck.Plan // a copy: --epochs may lengthen the run, which Run writes to run.json
		p = &pl
		if err := resumeFlags(fs, o, drops, sets, p, ck, *out, stderr); err != nil {
			return err
		}
	} else {
		if _, err := os.Stat(*out + "/checkpoint.gob"); err == nil {
			return fmt.Errorf("--out %s holds a run already: pass --resume to continue it, or choose another directory", *out)
		}
		if err := train.CheckNoStrayLogs(*out); err != nil {
			return fmt.Errorf("--out %w", err)
		}
		o.Drops = drops
		o.FillDefaults()
		o.Sets = sets.pairs()
		lr0Set := false
		fs.Visit(func(f *flag.Flag) { lr0Set = lr0Set || f.Name == "lr0" })
		if lr, ok := train.MethodLR0(o.Method); ok && !lr0Set {
			o.LR0 = lr
		}
		if err := o.Validate(); err != nil {
			return err
		}
		for _, w := range o.Warnings() {
			fmt.Fprintln(stderr, "warning: "+w)
		}
	}
	opts := o
	if p != nil {
		opts = p.Options
	}
	src, err := train.Load(context.Background(), *dataDir, opts.Dataset, *download, *mirror, opts.Seed, stderr)
	if err != nil {
		return err
	}
	if p == nil {
		if p, err = train.NewPlan(opts, src.NTrain()); err != nil {
			return err
		}
		p.Data = src.Files()
		for _, w := range p.Warnings() {
			fmt.Fprintln(stderr, "warning: "+w)
		}
	}
	tr, val, test, err := train.Splits(src, p)
	if err != nil {
		return err
	}
	var progress func(epoch, pos int, res schedule.Result, loss float64)
	if isTerminal(stderr) {
		progress = func(epoch, pos int, res schedule.Result, loss float64) {
			if pos%10 != 0 && pos != p.StepsPerEpoch {
				return
			}
			const width = 30
			done := width * pos / p.StepsPerEpoch
			fmt.Fprintf(stderr, "\repoch %d/%d [%s%s] %3d%% loss %.4f lr %.3g ", epoch, p.Options.Epochs,
				strings.Repeat("=", done), strings.Repeat(" ", width-done), 100*pos/p.StepsPerEpoch, loss, res.NextLR)
			if pos == p.StepsPerEpoch {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
	// Ctrl-C or SIGTERM: finish the step, write the checkpoint, the logs
	// and the figures; a second signal kills the process as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if unlock == nil {
		if unlock, err = lockDir("out", *out); err != nil {
			stop()
			return err
		}
		defer unlock()
	}
	fmt.Fprintf(stderr, "salsa train: writing to %s\n", *out)
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		stop()
		return err
	}
	res, err := train.Run(ctx, p, *out, ck, *maxSteps, tr, val, test, progress, stderr)
	stop()
	// the error a run stopped with, as salsa compare leaves it; none after
	// a run that ended clean
	if ferr := compare.RecordFailure(*out, err); ferr != nil {
		fmt.Fprintf(stderr, "salsa train: %v\n", ferr)
	}
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if progress != nil {
		fmt.Fprint(stderr, "\r\033[K") // the progress bar's line
	}
	if err != nil {
		return err
	}
	if !*noPlots {
		if err := plots.DrawRun(*out); err != nil {
			fmt.Fprintf(stderr, "salsa train: figures: %v\n", err)
		}
	}
	if res.Stopped {
		why := "--max-steps"
		if res.Interrupted {
			why = "interrupted"
		}
		what := "checkpoint, logs and figures"
		if *noPlots {
			what = "checkpoint and logs"
		}
		fmt.Fprintf(stdout, "stopped (%s): steps=%d lr=%s seconds=%.1f; %s in %s (continue with: salsa train --resume --out %s)\n",
			why, res.Steps, strconv.FormatFloat(res.LR, 'g', 6, 64), res.Seconds, what, *out, *out)
		return nil
	}
	metric := fmt.Sprintf("test_acc=%.4f", res.TestAcc)
	if train.IsText(p.Options.Dataset) {
		metric = fmt.Sprintf("test_ppl=%.3f", res.TestPPL)
	}
	fmt.Fprintf(stdout, "final: %s test_loss=%.4f lr=%s epochs=%d seconds=%.1f\n",
		metric, res.TestLoss, strconv.FormatFloat(res.LR, 'g', 6, 64), res.Epochs, res.Seconds)
	fmt.Fprintf(stderr, "salsa train: outputs in %s\n", *out)
	return nil
}

// startCPUProfile starts a CPU profile into the file path, if not empty,
// with the step's phases labelled (salsagomlx.LabelPhases), and returns the
// function that stops both and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	salsagomlx.LabelPhases(true)
	return func() error {
		salsagomlx.LabelPhases(false)
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile %s: %w", path, err)
		}
		return nil
	}, nil
}
