package cli

import (
	"bufio"
	"fmt"
	"io"

	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

func init() {
	commands["replay"] = command{"run a scheduler over a logged trace and print its events", runReplay}
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	tracePath := fs.String("trace", "", "trace `file` (step,lr,loss,x1d,d2,eta; gzip or plain)")
	configPath := fs.String("config", "", "run `meta.json` whose config object (statopt keyword names) sets the method and its settings")
	method := fs.String("method", "", "scheduler: "+fmt.Sprint(schedule.Methods)+" (default: the config's, else salsa)")
	preset := fs.String("preset", "", "defaults when there is no --config: paper or statopt (default paper)")
	n := fs.Int("n", 0, "training-set size, for the paper's defaults N_min, K_test and γ (without --config)")
	batch := fs.Int("batch", 0, "mini-batch size, for the paper's defaults (without --config)")
	lr0 := fs.Float64("lr0", 0, "initial learning rate (default: the config's, else the trace's first lr)")
	var sets setFlags
	fs.Var(&sets, "set", "`key=value` hyperparameter, repeatable; keys: "+fmt.Sprint(schedule.Keys()))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: salsa replay --trace RUN.trace.csv.gz [--config RUN.meta.json | --preset P --n N --batch B] [--method M] [--set key=value]...")
		fmt.Fprintln(stderr, "\nPrints the events CSV (the conformance events format) of the scheduler run over the trace's statistics.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *tracePath == "" {
		fmt.Fprintln(stderr, "salsa replay: --trace is required")
		fs.Usage()
		return errUsage
	}
	rows, err := trace.ReadTraceFile(*tracePath)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("--trace %s: no rows", *tracePath)
	}
	var cfg schedule.Config
	m := *method
	if *configPath != "" {
		if *preset != "" || *n != 0 || *batch != 0 {
			return fmt.Errorf("--preset, --n and --batch apply only without --config")
		}
		meta, err := trace.ReadMeta(*configPath)
		if err != nil {
			return err
		}
		var cm string
		if cm, cfg, err = replay.FromStatopt(&meta.Config); err != nil {
			return fmt.Errorf("--config %s: %w", *configPath, err)
		}
		if m == "" {
			m = cm
		}
	} else {
		p := schedule.Preset(*preset)
		if p == "" {
			p = schedule.PresetPaper
		}
		if *n <= 0 || *batch <= 0 {
			return fmt.Errorf("without --config, --n and --batch are required (got --n=%d --batch=%d): they set the paper's N_min, K_test and γ", *n, *batch)
		}
		// The trace's first rate; a line-search trace logs the smoothed α_1,
		// so pass --lr0 to start SSLS from the run's α_0.
		if cfg, err = schedule.Defaults(p, *n, *batch, rows[0].LR); err != nil {
			return err
		}
		if m == "" {
			m = "salsa"
		}
	}
	if *lr0 != 0 {
		if err := cfg.Set("lr0", fmt.Sprint(*lr0)); err != nil {
			return err
		}
	}
	for _, kv := range sets.pairs() {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	s, err := schedule.New(m, cfg)
	if err != nil {
		return err
	}
	evs, rep, err := replay.Run(rows, s)
	if err != nil {
		return err
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
