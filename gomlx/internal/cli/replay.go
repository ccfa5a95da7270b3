package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

func init() {
	commands["replay"] = command{"run a scheduler over a logged trace and print its events", runReplay}
}

// firstLRIsLR0 reports whether a method's first logged rate is α_0: not so
// for a line search (SSLS smooths it) or a warmup (it ramps up).
func firstLRIsLR0(method string) bool {
	switch strings.TrimSuffix(method, "-val") {
	case "salsa", "ssls", "adam-warmup":
		return false
	}
	return true
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	runDir := fs.String("run", "", "run `directory` of salsa train: replays DIR/steps.csv.gz with the settings of DIR/run.json, the schedule as the run recorded it (and, for a -val method or plateau, the validation losses of DIR/events.csv)")
	tracePath := fs.String("trace", "", "trace `file` (step,lr,loss,x1d,d2,eta; gzip or plain)")
	configPath := fs.String("config", "", "settings `file`: a run.json of salsa train, or a conformance meta.json (its config object; the recorded outcomes are not needed)")
	method := fs.String("method", "", "method: "+strings.Join(replay.Methods, ", ")+"; cut and warmup are aliases of shb-hand and adam-warmup (default: the config's, else salsa)")
	preset := fs.String("preset", "", "defaults when there is no --config: paper or statopt (default paper)")
	n := fs.Int("n", 0, "training-set size, for the paper's defaults N_min, K_test and γ (without --config)")
	batch := fs.Int("batch", 0, "mini-batch size, for the paper's defaults (without --config)")
	lr0 := fs.Float64("lr0", 0, "initial learning rate α_0 (default: the config's; without one, the trace's first lr, which only methods without a line search or warmup may take)")
	var sets setFlags
	fs.Var(&sets, "set", "`key=value` hyperparameter, repeatable; keys: "+fmt.Sprint(schedule.Keys()))
	setUsage(fs, "usage: salsa replay --run DIR [--method M] [--set key=value]...\n"+
		"       salsa replay --trace STEPS.csv.gz --config RUN.json|META.json [--method M] [--set key=value]...\n"+
		"       salsa replay --trace STEPS.csv.gz --n N --batch B [--preset P] [--method M] [--lr0 X] [--set key=value]...\n"+
		"\nPrints the events CSV (the format of a run's events.csv) of the scheduler run over the trace's statistics.\n"+
		"With the run's own settings it reproduces the run's events.csv.")
	if err := parse(fs, args); err != nil {
		return err
	}
	lr0Set, presetSet := false, false
	fs.Visit(func(f *flag.Flag) { lr0Set, presetSet = lr0Set || f.Name == "lr0", presetSet || f.Name == "preset" })
	if lr0Set && (!(*lr0 > 0) || math.IsInf(*lr0, 0)) {
		return fmt.Errorf("--lr0 %v: must be finite and > 0", *lr0)
	}
	if *runDir != "" {
		if *tracePath != "" || *configPath != "" {
			return fmt.Errorf("--run %s reads DIR/steps.csv.gz and DIR/run.json: --trace and --config apply only without --run", *runDir)
		}
		*tracePath = filepath.Join(*runDir, "steps.csv.gz")
		*configPath = filepath.Join(*runDir, "run.json")
	}
	if *tracePath == "" {
		fmt.Fprintln(stderr, "salsa replay: --run or --trace is required")
		fs.Usage()
		return errUsage
	}
	m := ""
	if *method != "" {
		var err error
		if m, err = replay.Canonical(*method); err != nil {
			return fmt.Errorf("--method %s: %w", *method, err)
		}
	}
	rows, err := trace.ReadTraceFile(*tracePath)
	if err != nil {
		if !strings.Contains(err.Error(), *tracePath) {
			return fmt.Errorf("--trace %s: %w", *tracePath, err)
		}
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("--trace %s: no rows", *tracePath)
	}
	var cfg schedule.Config
	// recorded: a run.json's schedule, as salsa train's method fixed it
	// then, replayed under that method as it is (schedule.Build)
	recorded := false
	if *configPath != "" {
		if *preset != "" || *n != 0 || *batch != 0 {
			return fmt.Errorf("--preset, --n and --batch apply only without --config or --run (the settings come from %s)", *configPath)
		}
		st, err := replay.ReadSettings(*configPath)
		if err != nil {
			flag := "--config"
			if *runDir != "" {
				flag = "--run"
			}
			return fmt.Errorf("%s %s: %w", flag, *configPath, err)
		}
		cfg = st.Config
		if m == "" {
			m = st.Method
		}
		recorded = st.Format == "run.json" && m == st.Method
	} else {
		p := schedule.Preset(*preset)
		if presetSet && p != schedule.PresetPaper && p != schedule.PresetStatopt {
			return fmt.Errorf("--preset %q: must be paper or statopt", *preset)
		}
		if p == "" {
			p = schedule.PresetPaper
		}
		if *n <= 0 || *batch <= 0 {
			return fmt.Errorf("without --config, --n and --batch are required (got --n=%d --batch=%d): they set the paper's N_min, K_test and γ", *n, *batch)
		}
		if m == "" {
			m = "salsa"
		}
		first := rows[0].LR
		if *lr0 == 0 {
			if !firstLRIsLR0(m) {
				return fmt.Errorf("--method %s without --config needs --lr0: the trace's first lr (%v) is α_1, which a line search smooths and a warmup ramps, not the run's α_0", m, first)
			}
			*lr0 = first
		}
		if cfg, err = schedule.Defaults(p, *n, *batch, *lr0); err != nil {
			return fmt.Errorf("--n %d, --batch %d, --lr0 %v: %w", *n, *batch, *lr0, err)
		}
	}
	if *lr0 != 0 {
		if err := cfg.Set("lr0", fmt.Sprint(*lr0)); err != nil {
			return fmt.Errorf("--lr0 %v: %w", *lr0, err)
		}
	}
	sched, _ := replay.Scheduler(m)
	// a config's γ raised for its warmup_share (TailConfig.WarmupGamma) is
	// recorded raised: another share or budget cannot work out γ again
	raisedShare, raisedGamma := cfg.Tail.WarmupShare, cfg.SSLS.Gamma
	gammaSet := slices.ContainsFunc(sets.pairs(), func(kv [2]string) bool { return kv[0] == "gamma" })
	for _, kv := range sets.pairs() {
		if (kv[0] == "warmup_share" || kv[0] == "total_steps") && raisedShare > 0 && !gammaSet && schedule.KeyApplies("warmup_share", sched) {
			return fmt.Errorf("--set %s=%s: the config's γ (%v) was raised for its warmup_share %v, and the γ before that is not recorded: give --set gamma as well", kv[0], kv[1], raisedGamma, raisedShare)
		}
		if kv[0] == "lr0" && lr0Set {
			return fmt.Errorf("--lr0 %v and --set lr0=%s both set α_0: give one", *lr0, kv[1])
		}
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			return err
		}
		if !schedule.KeyApplies(kv[0], sched) {
			return fmt.Errorf("--set %s does nothing for --method %s", kv[0], m)
		}
	}
	build := schedule.New
	if recorded {
		build = schedule.Build
	}
	s, err := build(sched, cfg)
	if err != nil {
		// a value out of range: named by the key typed, not the Go field
		var fe *schedule.FieldError
		if errors.As(err, &fe) {
			keys := schedule.KeysFor(sched, fe.Field)
			for _, kv := range slices.Backward(sets.pairs()) {
				if slices.Contains(keys, kv[0]) {
					return fmt.Errorf("--set %s=%s: %s", kv[0], kv[1], fe.Want)
				}
			}
			if len(keys) > 0 { // a setting the config or the defaults left out of range
				return fmt.Errorf("--set %s=%v (not given): %s", keys[0], fe.Value, fe.Want)
			}
		}
		return err
	}
	// runEvents reads the run's events.csv once, for what the scheduler
	// needs of it (why: the error's words)
	var logged []schedule.Event
	runEvents := func(why string) ([]schedule.Event, error) {
		if logged == nil {
			l, err := trace.ReadEventsFile(filepath.Join(*runDir, "events.csv"))
			if err != nil {
				return nil, fmt.Errorf("--run %s: --method %s %s events.csv: %w", *runDir, m, why, err)
			}
			logged = l
		}
		return logged, nil
	}
	var vals []replay.Validation
	asks := schedule.AsksVal(s)
	if _, ok := s.(schedule.Validator); ok || asks {
		if *runDir == "" && asks {
			return fmt.Errorf("--method %s with probe_val=1 asks for validation losses during the probe: replay it with --run, whose events.csv has them", m)
		}
		if *runDir == "" {
			fmt.Fprintf(stderr, "salsa replay: %s checks a validation loss at each epoch's end; without --run there are none, so only its own test drops\n", m)
		} else {
			l, err := runEvents("needs the validation losses of")
			if err != nil {
				return err
			}
			vals = replay.ValidationsOf(l)
		}
	}
	evs, rep, err := replay.RunValidated(rows, s, vals)
	if err != nil {
		return err
	}
	if schedule.Averages(s) {
		// the pick between the decay's average and the last iterate is made
		// on the validation split's cells, which no trace holds
		if *runDir == "" {
			fmt.Fprintf(stderr, "salsa replay: %s ends with a pick between the average of the decay's iterates and the last iterate, made on the validation split: a trace does not have it, so it is left out (with --run it is copied from events.csv)\n", m)
		} else {
			l, err := runEvents("copies its pick of the average from")
			if err != nil {
				return err
			}
			for _, e := range l {
				if e.Kind == schedule.KindAverage {
					evs = append(evs, e)
				}
			}
		}
	}
	w := bufio.NewWriter(stdout)
	if err := trace.WriteEvents(w, evs); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if rep.Diverged != 0 {
		fmt.Fprintf(stderr, "salsa replay: the learning rate departs from the logged one at step %d (%v, logged %v); later decisions are what the tests would say at the logged iterates\n",
			rep.Diverged, rep.ReplayLR, rep.LoggedLR)
	}
	return nil
}
