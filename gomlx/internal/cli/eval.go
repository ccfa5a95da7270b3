package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
)

func init() {
	commands["eval"] = command{"evaluate a run's model on its validation and test splits, whole or limited", runEval}
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	runDir := fs.String("run", "", "run `directory` written by salsa train: its checkpoint's model is evaluated (required)")
	testLimit := fs.Int("test-limit", -1, "evaluate on the first `N` test examples (tokens for a text, whose validation split it limits too); 0: the whole splits; -1: the run's own --test-limit")
	dataDir := fs.String("data", "", "data root holding <dataset>/ (default $SALSA_DATA, else the copy in the repository)")
	setUsage(fs, "usage: salsa eval --run DIR [--test-limit N]\n"+
		"\nEvaluates the model of a run's last checkpoint (the end of its last epoch, or where --max-steps\n"+
		"stopped it) on the run's validation split, where it has one, and on its test split, and prints\n"+
		"one line. With the run's own --test-limit it repeats the last line of its epochs.csv; --test-limit 0\n"+
		"evaluates the whole splits. The run directory is not changed.")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *runDir == "" {
		return usageError(fs, "--run is required")
	}
	if *testLimit < -1 {
		return fmt.Errorf("--test-limit %d: must be ≥ 0, or -1 for the run's own", *testLimit) // a value out of range: exit 1, as in train
	}
	ck, err := train.ReadCheckpoint(*runDir)
	if err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	if _, err := os.Stat(filepath.Join(*runDir, plots.FailedFile)); err == nil {
		fmt.Fprintf(stderr, "salsa eval: note: %s has %s: the run stopped with an error after its last checkpoint (epoch %d, step %d), whose model is the one evaluated\n",
			*runDir, plots.FailedFile, len(ck.Epochs), ck.Step)
	}
	o := ck.Plan.Options
	src, err := train.Load(context.Background(), *dataDir, o.Dataset, false, "", o.Seed, stderr)
	if err != nil {
		return err
	}
	ev, err := train.EvaluateCheckpoint(ck, src, *testLimit) // a --test-limit beyond a split is named there
	if err != nil {
		return err
	}
	line := fmt.Sprintf("eval: steps=%d epochs=%d test_loss=%.6f test_acc=%.4f", ev.Step, ev.Epochs, ev.TestLoss, ev.TestAcc)
	if ev.Text {
		line += fmt.Sprintf(" test_ppl=%.4f", math.Exp(ev.TestLoss))
	}
	line += fmt.Sprintf(" test_n=%d", ev.TestN)
	if ev.ValN > 0 {
		line += fmt.Sprintf(" val_loss=%.6f val_acc=%.4f", ev.ValLoss, ev.ValAcc)
		if ev.Text {
			line += fmt.Sprintf(" val_ppl=%.4f", math.Exp(ev.ValLoss))
		}
		line += fmt.Sprintf(" val_n=%d", ev.ValN)
	}
	fmt.Fprintln(stdout, line)
	return nil
}
