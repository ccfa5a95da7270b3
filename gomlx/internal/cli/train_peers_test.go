package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/trace"
)

// peerArgs trains MNIST logistic regression on the first 2000 examples
// (16 steps an epoch), evaluated on 1000 test examples.
func peerArgs(method, out string, more ...string) []string {
	return append([]string{"train", "--dataset", "mnist", "--model", "logreg", "--method", method, "--limit", "2000",
		"--test-limit", "1000", "--out", out, "--no-plots"}, more...)
}

// TestTrainPeers: salsa train runs every peer method on MNIST logreg to
// its final line, the learning-rate-free and schedule-free ones at their
// authors' lr when --lr0 is not given, and runs them on a GoMLX model too
// (the direction on the host).
func TestTrainPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	final := regexp.MustCompile(`^final: test_acc=(0\.\d{4}) test_loss=\d+\.\d{4} lr=\S+ epochs=1 seconds=\d+\.\d\n$`)
	for _, m := range train.Peers {
		dir := t.TempDir()
		code, out, errs := run(t, peerArgs(m.Name, dir, "--epochs", "1")...)
		if code != 0 || !final.MatchString(out) {
			t.Errorf("%s: exit %d, stdout %q, stderr %s", m.Name, code, out, errs)
			continue
		}
		var rj train.RunJSON
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "run.json"))), &rj); err != nil {
			t.Fatal(err)
		}
		want := 0.01 // the --lr0 default
		if lr, ok := train.MethodLR0(m.Name); ok {
			want = lr
		}
		if rj.Engine != "native" || rj.Plan.Options.LR0 != want || rj.Plan.Scheduler != m.Scheduler || rj.Plan.Direction.Kind != m.Direction {
			t.Errorf("%s: engine %s, lr0 %v (want %v), %s with %s", m.Name, rj.Engine, rj.Plan.Options.LR0, want, rj.Plan.Scheduler, rj.Plan.Direction.Kind)
		}
		if m.Val && !strings.Contains(readFile(t, filepath.Join(dir, "events.csv")), "val_check") {
			t.Errorf("%s: no validation check in events.csv", m.Name)
		}
		// steps.csv.gz has the step each learning-rate-free or
		// schedule-free method took, and only theirs.
		rows := readSteps(t, dir)
		own := strings.HasPrefix(m.Name, "schedule-free") || slices.Contains([]string{"prodigy", "dadapt-sgd", "dog"}, m.Name)
		for _, r := range rows {
			if r.HasStepSize != own || own && !(r.StepSize > 0 && r.StepSize <= r.LR) {
				t.Errorf("%s: step %d: step_size %v (has it: %v), want one in (0, α_k = %v]: %v", m.Name, r.Step, r.StepSize, r.HasStepSize, r.LR, own)
				break
			}
		}
	}
	// adam-warmup without --lr0 runs at Adam's default 1e-3.
	dir := t.TempDir()
	if code, _, errs := run(t, peerArgs("adam-warmup", dir, "--epochs", "1")...); code != 0 {
		t.Fatalf("adam-warmup: exit %d: %s", code, errs)
	}
	if s := readFile(t, filepath.Join(dir, "run.json")); !strings.Contains(s, `"lr0": 0.001`) {
		t.Errorf("adam-warmup without --lr0: run.json has another lr0 than 0.001")
	}
	// --lr0 replaces the authors' rate.
	dir = t.TempDir()
	if code, _, errs := run(t, peerArgs("prodigy", dir, "--epochs", "1", "--lr0", "0.5")...); code != 0 {
		t.Fatalf("prodigy --lr0 0.5: exit %d: %s", code, errs)
	}
	if s := readFile(t, filepath.Join(dir, "run.json")); !strings.Contains(s, `"lr0": 0.5`) {
		t.Errorf("prodigy --lr0 0.5: run.json has another lr0")
	}
	// Prodigy's first step is α·d_0, d_0 = 1e-6 (prodigyopt's default).
	if rows := readSteps(t, dir); rows[0].StepSize != 0.5e-6 {
		t.Errorf("prodigy --lr0 0.5: step 1's step_size = %v, want α·d_0 = 5e-7", rows[0].StepSize)
	}
	dir = t.TempDir()
	code, out, errs := run(t, peerArgs("schedule-free-sgd", dir, "--model", "mlp", "--epochs", "1", "--limit", "512")...)
	if code != 0 || !final.MatchString(out) || !strings.Contains(readFile(t, filepath.Join(dir, "run.json")), `"engine": "gomlx"`) {
		t.Errorf("schedule-free-sgd on mlp: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Schedule-Free SGD's step γ_t is α_k, warmed up, on the GoMLX engine too.
	for _, r := range readSteps(t, dir) {
		if !r.HasStepSize || r.StepSize != r.LR {
			t.Errorf("schedule-free-sgd on mlp: step %d: step_size %v (has it: %v), want α_k = %v", r.Step, r.StepSize, r.HasStepSize, r.LR)
			break
		}
	}
	code, help, errs := run(t, "train", "--help")
	for _, m := range train.Peers {
		if !strings.Contains(help+errs, "  "+m.Name+" ") {
			t.Errorf("train --help (exit %d) does not describe %s", code, m.Name)
		}
	}
}

// readSteps reads a run's steps.csv.gz.
func readSteps(t *testing.T, dir string) []trace.Row {
	t.Helper()
	rows, err := trace.ReadTraceFile(filepath.Join(dir, "steps.csv.gz"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %d rows, %v", dir, len(rows), err)
	}
	return rows
}

// TestTrainPeersResume: a peer's run stopped in its second epoch and
// resumed ends as the uninterrupted run, bit for bit: the same final line,
// steps, events and epochs (but the seconds).
func TestTrainPeersResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	noSeconds := func(s string) string {
		lines := strings.Split(s, "\n")
		col := slices.Index(strings.Split(lines[0], ","), "seconds")
		for i, l := range lines {
			if f := strings.Split(l, ","); col >= 0 && col < len(f) {
				lines[i] = strings.Join(slices.Delete(f, col, col+1), ",")
			}
		}
		return strings.Join(lines, "\n")
	}
	cut := func(s string) string { return s[:max(0, strings.Index(s, " seconds="))] }
	type tc struct {
		method string
		more   []string
		stop   int
		probe  bool // events.csv must show the rate probe
	}
	cases := []tc{{"schedule-free-adamw", nil, 20, false}, {"prodigy", nil, 20, false}, {"cosine", nil, 20, false}, {"dog", nil, 20, false},
		{"plateau", nil, 20, false}, {"salsa-budget", nil, 20, false},
		// the rate probe, stopped inside a window: the switch forced after step 5, windows of 2 steps (5% of 32)
		{"salsa-budget", []string{"--set", "probe=1", "--set", "force_switch_at=5"}, 12, true},
		// salsa-probe: the probe started early, stopped just after a copy was kept
		{"salsa-probe", nil, 12, true},
		// with the validation loss asked for during the probe (the native
		// engine and GoMLX's), 10% of the examples held out for it
		{"salsa-probe", []string{"--set", "probe_val=1"}, 12, true},
		{"salsa-probe", []string{"--set", "probe_val=1", "--engine", "gomlx"}, 12, true}}
	for _, c := range cases {
		method := c.method
		if c.more != nil {
			method += " " + strings.Join(c.more, " ")
		}
		a, b := t.TempDir(), t.TempDir()
		code, outA, errs := run(t, peerArgs(c.method, a, append([]string{"--epochs", "2"}, c.more...)...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", method, code, errs)
		}
		if c.probe && !strings.Contains(readFile(t, filepath.Join(a, "events.csv")), ",probe,") {
			t.Fatalf("%s: no probe event in events.csv", method)
		}
		if pv := slices.Contains(c.more, "probe_val=1"); c.probe && pv != strings.Contains(readFile(t, filepath.Join(a, "events.csv")), ",val_check,") {
			t.Fatalf("%s: events.csv has a validation check: %v, want %v", method, !pv, pv)
		}
		code, stop, errs := run(t, peerArgs(c.method, b, append([]string{"--epochs", "2", "--max-steps", strconv.Itoa(c.stop)}, c.more...)...)...)
		if code != 0 || !strings.HasPrefix(stop, fmt.Sprintf("stopped (--max-steps): steps=%d", c.stop)) {
			t.Fatalf("%s: exit %d: %q %s", method, code, stop, errs)
		}
		code, outB, errs := run(t, "train", "--resume", "--out", b, "--no-plots")
		if code != 0 {
			t.Fatalf("%s: resume: exit %d: %s", method, code, errs)
		}
		if cut(outA) != cut(outB) || cut(outA) == "" {
			t.Errorf("%s: resumed %q, uninterrupted %q", method, outB, outA)
		}
		for _, f := range []string{"steps.csv.gz", "events.csv", "epochs.csv"} {
			x, y := readFile(t, filepath.Join(a, f)), readFile(t, filepath.Join(b, f))
			if f == "epochs.csv" {
				x, y = noSeconds(x), noSeconds(y)
			}
			if x != y || x == "" {
				t.Errorf("%s: %s differs after resuming", method, f)
			}
		}
	}
}

// TestSalsaBudgetExtendWarns: extending a finished salsa-budget run with
// --resume --epochs says that the budget stays the one it was given.
func TestSalsaBudgetExtendWarns(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, peerArgs("salsa-budget", dir, "--epochs", "1")...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs := run(t, "train", "--resume", "--out", dir, "--epochs", "2", "--no-plots")
	if code != 0 || !strings.Contains(errs, "warning: --epochs: salsa-budget keeps the budget it was given for --epochs 1 (") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
