package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
)

func init() {
	commands["plot"] = command{"draw the figures of a run directory, or compare several runs", runPlot}
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plot", stderr)
	runDir := fs.String("run", "", "run `directory` to draw: lr, loss, acc, ppl (language models) and stats (runs with a SASA+ test), .png and .svg")
	runs := fs.String("runs", "", "comma-separated run `directories` to overlay: compare_lr, compare_loss, compare_test_loss, compare_acc, and compare_val_loss and compare_ppl where a run has them")
	out := fs.String("out", "", "output `directory` (default: the --run directory; required with --runs)")
	setUsage(fs, "usage: salsa plot --run DIR [--out OUT]\n       salsa plot --runs DIR1,DIR2,... --out OUT\n"+
		"\nDraws figures as PNG and SVG from a run directory written by salsa train\n"+
		"(steps.csv.gz, events.csv, epochs.csv, run.json) and prints the files written.")
	if err := parse(fs, args); err != nil {
		return err
	}
	usageErr := func(msg string) error { return usageError(fs, msg) }
	var d plots.Drawn
	var err error
	switch {
	case (*runDir == "") == (*runs == ""):
		return usageErr("give exactly one of --run and --runs")
	case *runDir != "":
		o := *out
		if o == "" {
			o = *runDir
		}
		d, err = plots.DrawRunTo(*runDir, o)
	default:
		if *out == "" {
			return usageErr("--runs needs --out")
		}
		var dirs []string
		for _, s := range strings.Split(*runs, ",") {
			if s = strings.TrimSpace(s); s == "" {
				return usageErr(fmt.Sprintf("--runs %q: empty directory name", *runs))
			}
			if slices.ContainsFunc(dirs, func(d string) bool { return filepath.Clean(d) == filepath.Clean(s) }) {
				return usageErr(fmt.Sprintf("--runs %q: %s is listed twice", *runs, s))
			}
			dirs = append(dirs, s)
		}
		d, err = plots.DrawCompareTo(dirs, *out)
	}
	for _, f := range d.Files {
		fmt.Fprintln(stdout, f)
	}
	for _, s := range d.Skipped {
		fmt.Fprintln(stderr, "salsa plot: note: "+s)
	}
	return err
}
