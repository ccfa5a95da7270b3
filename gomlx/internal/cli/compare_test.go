package cli

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salsaopt/salsa/gomlx/internal/compare"
	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/trace"
)

// quick are the flags that make a compare on MNIST logreg fast.
var quick = []string{"--dataset", "mnist", "--model", "logreg", "--limit", "2000", "--test-limit", "500"}

func compareArgs(out string, args ...string) []string {
	return append(append([]string{"compare", "--out", out, "--no-plots"}, quick...), args...)
}

// reportRows returns the first cell of each row of report.md's main table.
func reportRows(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "| method |"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "| "):
			rows = append(rows, strings.TrimSpace(strings.Split(l, "|")[1]))
		default:
			in = false
		}
	}
	return rows
}

type fileStamp struct {
	size int64
	mod  time.Time
}

func stamps(t *testing.T, dir string) map[string]fileStamp {
	t.Helper()
	m := map[string]fileStamp{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			m[p] = fileStamp{fi.Size(), fi.ModTime()}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readRunJSON(t *testing.T, dir string) train.RunJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rj train.RunJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	return rj
}

// TestCompareReportAndRerun runs four methods × two seeds: report.md has a
// row per method, as typed, in order; every run of a seed trains on the
// same examples with the same seed (hence the same shuffles); and a second
// invocation trains nothing and leaves every run file as it was.
func TestCompareReportAndRerun(t *testing.T) {
	out := t.TempDir()
	args := compareArgs(out, "--methods", "salsa,sasa+,shb-hand,adam-warmup", "--epochs", "2", "--seeds", "2")
	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "trained 8, resumed 0, skipped 0") {
		t.Errorf("stdout %q", stdout)
	}
	if got := reportRows(t, out); strings.Join(got, ";") != "salsa;sasa+;shb-hand;adam-warmup" {
		t.Errorf("report rows %q", got)
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"Target 0.", "99% of the best final test accuracy", "relative to the cheapest row", "1.00×"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	for _, seed := range []string{"1", "2"} {
		var nTrain []int
		for _, m := range []string{"salsa", "sasa+", "shb-hand", "adam-warmup"} {
			lr := "0.01" // salsa train's default; adam-warmup's is Adam's 1e-3
			if m == "adam-warmup" {
				lr = "0.001"
			}
			rj := readRunJSON(t, filepath.Join(out, "runs", m+"-lr"+lr+"-s"+seed))
			if fmt.Sprint(rj.Plan.Options.Seed) != seed || rj.Plan.Options.Method != m || rj.Plan.Options.Label != m {
				t.Errorf("%s seed %s: run.json options %+v", m, seed, rj.Plan.Options)
			}
			nTrain = append(nTrain, rj.Plan.NTrain)
		}
		if nTrain[0] != 2000 || strings.Count(fmt.Sprint(nTrain), "2000") != 4 {
			t.Errorf("seed %s: n_train %v: the methods of a seed must train on the same examples", seed, nTrain)
		}
	}
	before := stamps(t, filepath.Join(out, "runs"))
	time.Sleep(20 * time.Millisecond)
	code, stdout, stderr = run(t, args...)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "all finished before, nothing to train") || !strings.Contains(stdout, "trained 0, resumed 0, skipped 8") {
		t.Errorf("second run: stdout %q stderr %q", stdout, stderr)
	}
	after := stamps(t, filepath.Join(out, "runs"))
	if len(after) != len(before) || len(before) < 8*6 {
		t.Errorf("second run: %d files, before %d", len(after), len(before))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("second run changed %s", p)
		}
	}
	if got := reportRows(t, out); len(got) != 4 {
		t.Errorf("second run: report rows %q", got)
	}
}

// TestCompareResumesInterrupted stops the run at --max-steps (a checkpoint
// in the middle of epoch 1, no report), then runs the command again: the
// run resumes and its steps.csv.gz equals that of an uninterrupted compare.
func TestCompareResumesInterrupted(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	code, stdout, stderr := run(t, compareArgs(a, "--methods", "salsa", "--epochs", "2", "--max-steps", "7")...)
	if code != 0 || !strings.Contains(stdout, "1 run(s) stopped at --max-steps 7") {
		t.Fatalf("exit %d: %q %s", code, stdout, stderr)
	}
	dir := filepath.Join(a, "runs", "salsa-lr0.01-s1")
	ck, err := train.ReadCheckpoint(dir)
	if err != nil || ck.Step != 7 {
		t.Fatalf("checkpoint: %v, %+v", err, ck)
	}
	if _, err := os.Stat(filepath.Join(a, "report.md")); err == nil {
		t.Errorf("report.md written with a run unfinished")
	}
	code, stdout, stderr = run(t, compareArgs(a, "--methods", "salsa", "--epochs", "2")...)
	if code != 0 || !strings.Contains(stderr, "0 to train, 1 to resume") || !strings.Contains(stdout, "trained 0, resumed 1, skipped 0") {
		t.Fatalf("resume: exit %d: %q %s", code, stdout, stderr)
	}
	if code, _, stderr = run(t, compareArgs(b, "--methods", "salsa", "--epochs", "2")...); code != 0 {
		t.Fatalf("uninterrupted: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"steps.csv.gz", "events.csv"} {
		x, _ := os.ReadFile(filepath.Join(dir, f))
		y, _ := os.ReadFile(filepath.Join(b, "runs", "salsa-lr0.01-s1", f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: the resumed run differs from the uninterrupted one", f)
		}
	}
	// Other settings into the same --out are refused, naming the difference.
	code, _, stderr = run(t, compareArgs(a, "--methods", "salsa", "--epochs", "3")...)
	if code != 1 || !strings.Contains(stderr, "holds a run with other settings (epochs: 2, here 3)") {
		t.Errorf("other --epochs: exit %d: %s", code, stderr)
	}
}

// TestCompareSweep: --sweep c=… makes a row per value for the methods c
// applies to, and one row for the others.
func TestCompareSweep(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, compareArgs(out, "--methods", "salsa,shb-hand", "--sweep", "c=0.05,0.2", "--epochs", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := reportRows(t, out); strings.Join(got, ";") != "salsa[c=0.05];salsa[c=0.2];shb-hand" {
		t.Errorf("rows %q", got)
	}
	if !strings.Contains(stderr, "--sweep c applies to salsa only; shb-hand run once") {
		t.Errorf("stderr %q", stderr)
	}
	for _, v := range []string{"0.05", "0.2"} {
		rj := readRunJSON(t, filepath.Join(out, "runs", "salsa-lr0.01-c"+v+"-s1"))
		if fmt.Sprint(rj.Plan.Options.Sets) != "[[c "+v+"]]" || rj.Plan.Options.Label != "salsa[c="+v+"]" {
			t.Errorf("c=%s: options %+v", v, rj.Plan.Options)
		}
	}
}

// TestCompareDropKeysFromSwitch: the keys that shape only SASA+'s drops
// (tau here) go to salsa-budget only where its decay does not begin at the
// switch (decay_from_switch=0); elsewhere salsa-budget runs without them,
// with a note, as for any key a method does not read.
func TestCompareDropKeysFromSwitch(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, compareArgs(out, "--methods", "salsa,salsa-budget,shb-hand", "--grid", "shb-hand", "--lr0s", "0.1,1",
		"--start-lr0s", "0.01,0.1", "--set", "tau=0.5", "--sweep", "decay_from_switch=0,1", "--epochs", "1", "--max-steps", "2")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"--sweep decay_from_switch applies to salsa-budget only; salsa, shb-hand run once",
		// once, though two rows (lr0 0.01 and 0.1) go without it
		"--set tau=0.5 does nothing for salsa-budget with decay_from_switch=1; those runs go without it",
	} {
		if n := strings.Count(stderr, want); n != 1 {
			t.Errorf("stderr %q has %q %d times, want once", stderr, want, n)
		}
	}
	for dir, sets := range map[string]string{
		"salsa-lr0.01-s1":                           "[[tau 0.5]]",
		"salsa-budget-lr0.1-decay_from_switch0-s1":  "[[tau 0.5] [decay_from_switch 0]]",
		"salsa-budget-lr0.01-decay_from_switch1-s1": "[[decay_from_switch 1]]",
		"shb-hand-lr1-s1":                           "[[tau 0.5]]",
	} {
		if got := fmt.Sprint(readRunJSON(t, filepath.Join(out, "runs", dir)).Plan.Options.Sets); got != sets {
			t.Errorf("%s: sets %s, want %s", dir, got, sets)
		}
	}
}

// setColumn rewrites a column of the last row of a run's epochs.csv.
func setColumn(t *testing.T, dir, col string, v float64) {
	t.Helper()
	path := filepath.Join(dir, "epochs.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	i := strings.Index(","+lines[0]+",", ","+col+",")
	if i < 0 {
		t.Fatalf("%s has no %s", path, col)
	}
	k := strings.Count(lines[0][:i], ",")
	cells := strings.Split(lines[len(lines)-1], ",")
	cells[k] = fmt.Sprint(v)
	lines[len(lines)-1] = strings.Join(cells, ",")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareGridPicksByValidation tunes shb-hand over two rates; every
// run holds out the same validation split; the pick follows the validation
// accuracy even where the test accuracy says the opposite (the files are
// edited so that they disagree, and the command, run again, re-reads them).
func TestCompareGridPicksByValidation(t *testing.T) {
	out := t.TempDir()
	args := compareArgs(out, "--methods", "salsa,shb-hand", "--lr0s", "0.01,0.1", "--lr0", "0.01", "--grid", "shb-hand", "--epochs", "1")
	code, _, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range []string{"salsa-lr0.01-s1", "shb-hand-lr0.01-s1", "shb-hand-lr0.1-s1"} {
		rj := readRunJSON(t, filepath.Join(out, "runs", r))
		if rj.Plan.Options.HoldOut != 0.1 || rj.Plan.NVal != 200 || rj.Plan.NTrain != 1800 {
			t.Errorf("%s: hold_out %v n_val %d n_train %d", r, rj.Plan.Options.HoldOut, rj.Plan.NVal, rj.Plan.NTrain)
		}
		es, _ := os.ReadFile(filepath.Join(out, "runs", r, "epochs.csv"))
		if !regexp.MustCompile(`,0\.\d+\n$`).Match(es) {
			t.Errorf("%s: no val_acc in epochs.csv:\n%s", r, es)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "salsa-lr0.1-s1")); err == nil {
		t.Errorf("salsa ran at lr0 0.1 despite --lr0 0.01")
	}
	for _, c := range []struct {
		lowVal, highVal string
	}{{"0.1", "0.01"}, {"0.01", "0.1"}} {
		// highVal: better on validation, worse on test.
		setColumn(t, filepath.Join(out, "runs", "shb-hand-lr"+c.highVal+"-s1"), "val_acc", 0.9)
		setColumn(t, filepath.Join(out, "runs", "shb-hand-lr"+c.highVal+"-s1"), "test_acc", 0.5)
		setColumn(t, filepath.Join(out, "runs", "shb-hand-lr"+c.lowVal+"-s1"), "val_acc", 0.8)
		setColumn(t, filepath.Join(out, "runs", "shb-hand-lr"+c.lowVal+"-s1"), "test_acc", 0.95)
		code, stdout, stderr := run(t, args...)
		if code != 0 || !strings.Contains(stdout, "trained 0") {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		rows := reportRows(t, out)
		if len(rows) != 2 || rows[1] != "shb-hand (tuned)" {
			t.Errorf("picked by validation %s: rows %q", c.highVal, rows)
		}
		report, _ := os.ReadFile(filepath.Join(out, "report.md"))
		if !strings.Contains(string(report), "| shb-hand | "+c.highVal+" | 0.9000 | yes |") ||
			!strings.Contains(string(report), "| shb-hand (tuned) | "+c.highVal+" (tuned) | 0.5000 |") ||
			!strings.Contains(string(report), "never the test metric") {
			t.Errorf("report.md's tuning table:\n%s", report)
		}
		// Either pick is an end of a two-rate grid: the report and stderr say so.
		edge, beyond := "largest", "above"
		if c.highVal == "0.01" {
			edge, beyond = "smallest", "below"
		}
		warn := "shb-hand: the lr0 picked, " + c.highVal + ", is the " + edge + " of --lr0s: the best rate may lie " + beyond + " the grid; widen it to tell"
		if !strings.Contains(string(report), "**"+warn+".**") || !strings.Contains(stderr, "compare: warning: "+warn+"\n") {
			t.Errorf("want the warning %q in report.md and on stderr; stderr:\n%s\nreport:\n%s", warn, stderr, report)
		}
	}
	// A rate inside the grid, best on validation: no warning.
	args3 := slices.Clone(args)
	args3[slices.Index(args3, "0.01,0.1")] = "0.01,0.03,0.1"
	if code, _, stderr := run(t, args3...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	setColumn(t, filepath.Join(out, "runs", "shb-hand-lr0.03-s1"), "val_acc", 0.95)
	code, _, stderr = run(t, args3...)
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if code != 0 || !strings.Contains(string(report), "| shb-hand | 0.03 | 0.9500 | yes |") || strings.Contains(stderr, "warning") || strings.Contains(string(report), "widen it") {
		t.Errorf("lr0 0.03 picked inside the grid: exit %d, stderr %q, report:\n%s", code, stderr, report)
	}
}

// TestCompareStartLR0s: with --grid, --start-lr0s runs each untuned method
// from every rate, a row per rate, on the same validation split as the tuned
// rows.
func TestCompareStartLR0s(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, compareArgs(out, "--methods", "salsa,shb-hand", "--lr0s", "0.01,0.1", "--start-lr0s", "0.001,0.1",
		"--grid", "shb-hand", "--epochs", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range []string{"salsa-lr0.001-s1", "salsa-lr0.1-s1"} {
		rj := readRunJSON(t, filepath.Join(out, "runs", r))
		if rj.Plan.Options.HoldOut != 0.1 || rj.Plan.NTrain != 1800 {
			t.Errorf("%s: hold_out %v n_train %d", r, rj.Plan.Options.HoldOut, rj.Plan.NTrain)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "salsa-lr0.01-s1")); err == nil {
		t.Errorf("salsa ran at a --lr0s rate, not only at --start-lr0s")
	}
	if rows := reportRows(t, out); !slices.Equal(rows, []string{"salsa[lr0=0.001]", "salsa[lr0=0.1]", "shb-hand (tuned)"}) {
		t.Errorf("rows %q", rows)
	}
}

// TestCompareFlagErrors: each bad flag gets an error naming the flag, the
// value and what is allowed.
func TestCompareFlagErrors(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--methods", "salsa,nope"}, 1, `--methods salsa,nope: unknown method "nope"; the methods are ` + strings.Join(train.Methods, ", ")},
		{[]string{"--methods", "salsa,salsa"}, 1, "salsa is listed twice"},
		{[]string{"--methods", "salsa-val", "--hold-out", "0.2", "--set", "val_fraction=0.3"}, 1, "--set val_fraction=0.3: salsa compare holds out --hold-out (0.2)"},
		{[]string{"--methods", "salsa,sasa+", "--grid", "sasa+", "--lr0s", "0.01,0.1", "--lr0", "0"}, 1, "--lr0 0: must be finite and > 0"},
		{[]string{"--methods", "salsa", "--mirror", "http://x"}, 1, "--mirror http://x: is used only with --download"},
		{[]string{"--methods", "salsa", "--sweep", "delta=0.01,0.01"}, 1, "would share the directory"},
		{[]string{"--methods", "salsa", "--sweep", "delta=0.01,0.1", "--set", "delta=0.05"}, 1, "--sweep delta=0.01,0.1 and --set delta=0.05 both set delta: give one"},
		{[]string{"--methods", "salsa", "--set", "delta=0.05", "--set", "delta=0.1"}, 2, `"delta=0.1": delta given twice (0.05 before): give each key once`},
		{[]string{}, 2, "--methods is required; the methods are salsa"},
		{[]string{"--methods", "salsa", "--seeds", "0"}, 1, "--seeds 0: must be in [1, 1000]"},
		{[]string{"--methods", "salsa", "--seeds", "99999999999"}, 1, "--seeds 99999999999: must be in [1, 1000]"}, // was an out-of-memory crash
		{[]string{"--methods", "salsa", "--lr0s", "0.01,x"}, 1, `--lr0s 0.01,x: "x": each rate must be a finite number > 0`},
		{[]string{"--methods", "salsa", "--lr0s", "0.01,-1"}, 1, `"-1": each rate must be a finite number > 0`},
		{[]string{"--methods", "salsa", "--jobs", "999"}, 1, "--jobs 999: must be between 1 and the"},
		{[]string{"--methods", "salsa", "--grid", "shb-hand", "--lr0s", "0.1,1"}, 1, "--grid shb-hand: shb-hand is not one of --methods salsa"},
		{[]string{"--methods", "shb-hand", "--grid", "shb-hand"}, 1, "--grid shb-hand tunes lr0 over --lr0s: give ≥ 2 rates (got 0)"},
		{[]string{"--methods", "salsa", "--sweep", "zzz=1,2"}, 1, `--sweep zzz=1,2: unknown key "zzz"; the keys are`},
		{[]string{"--methods", "shb-hand", "--sweep", "c=1,2"}, 1, "--sweep c: --set c does nothing for --method shb-hand; it applies to"},
		{[]string{"--methods", "salsa", "--sweep", "c"}, 1, `--sweep "c": want key=v1,v2,...`},
		{[]string{"--methods", "salsa-budget", "--set", "tau=0.5"}, 1, "--set tau=0.5: --set tau does nothing for --method salsa-budget with decay_from_switch=1 (the default)"},
		{[]string{"--methods", "salsa-budget", "--sweep", "keep_momentum=0,1"}, 1, "--sweep keep_momentum: --set keep_momentum does nothing for --method salsa-budget with decay_from_switch=1"},
		{[]string{"--methods", "salsa", "--hold-out", "1"}, 1, "--hold-out 1: must be in (0, 1)"},
		{[]string{"--methods", "salsa", "--hold-out", "0.3"}, 1, "--hold-out 0.3: no run here uses a validation split"},
		{[]string{"--methods", "salsa-val", "--dataset", "tinyshakespeare", "--model", "lstm", "--hold-out", "0.3"}, 1, "--hold-out 0.3: a text validates on its own validation split"},
		{[]string{"--methods", "salsa", "--target", "2"}, 1, "--target 2: an accuracy target must be in (0, 1]"},
		{[]string{"--methods", "salsa", "--lr0", "0.1"}, 1, "--lr0 0.1: sets the rate of the methods not tuned by --grid"},
		{[]string{"--methods", "salsa", "--start-lr0s", "0.1,0.01"}, 1, "--start-lr0s 0.1,0.01: sets the rates of the methods not tuned by --grid: give --grid"},
		{[]string{"--methods", "salsa,shb-hand", "--grid", "shb-hand", "--lr0s", "0.1,1", "--start-lr0s", "0.1", "--lr0", "0.1"}, 1, "--start-lr0s 0.1 and --lr0 0.1 both set the rate"},
		{[]string{"--methods", "salsa,shb-hand", "--grid", "shb-hand", "--lr0s", "0.1,1", "--start-lr0s", "0.1,0.1"}, 1, "--start-lr0s 0.1,0.1: 0.1 is listed twice"},
		{[]string{"--methods", "salsa", "--model", "nope"}, 1, "--model nope: must be one of logreg"},
		{[]string{"--methods", "salsa", "--profile", "x"}, 2, "--profile reads compare directories: --methods does not go with it"},
		{[]string{"--profile", "x", "--profile-time", "hours"}, 1, "--profile-time hours: must be seconds, epochs or steps"},
	} {
		code, _, stderr := run(t, append([]string{"compare", "--out", out}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d; stderr %q lacks %q", c.args, code, c.code, stderr, c.want)
		}
	}
}

// writeSummary writes a hand-made summary.json: each row's seeds' seconds
// to target, a negative one for not reached.
func writeSummary(t *testing.T, dir string, rows map[string][]float64, order []string) {
	t.Helper()
	s := compare.Summary{Task: dir, Metric: "test_acc", Higher: true, Target: 0.9}
	for _, name := range order {
		secs, ok := rows[name]
		if !ok {
			continue
		}
		r := compare.RowSummary{Name: name, Method: name}
		for i, v := range secs {
			ss := compare.SeedSummary{Seed: uint64(i + 1)}
			if v >= 0 {
				ss.ToTarget = &compare.Time{Epochs: 1, Steps: 1, Seconds: v}
			}
			r.Seeds = append(r.Seeds, ss)
		}
		s.Rows = append(s.Rows, r)
	}
	b, _ := json.Marshal(s)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, compare.SummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareProfile: performance profiles over three hand-made tasks.
// Times to target (median over seeds): task 1: A 10, B 20, C never; task 2:
// A 30, B 15, C 100 (ratio 6.7 > r_max = 4: not solved); task 3: A absent,
// B 5, C 5. Ratios: A 1, 2, ∞; B 2, 1, 1; C ∞, ∞, 1.
func TestCompareProfile(t *testing.T) {
	root := t.TempDir()
	order := []string{"A", "B", "C"}
	d1, d2, d3 := filepath.Join(root, "t1"), filepath.Join(root, "t2"), filepath.Join(root, "t3")
	writeSummary(t, d1, map[string][]float64{"A": {9, 10, 50}, "B": {20}, "C": {-1, -1}}, order)
	writeSummary(t, d2, map[string][]float64{"A": {30}, "B": {15}, "C": {100}}, order)
	writeSummary(t, d3, map[string][]float64{"B": {5, -1, 5}, "C": {5}}, order)
	out := filepath.Join(root, "p")
	code, stdout, stderr := run(t, "compare", "--profile", d1+","+d2+","+d3, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"profile.md", "profile.png", "profile.svg"} {
		if !strings.Contains(stdout, filepath.Join(out, f)) {
			t.Errorf("stdout %q lacks %s", stdout, f)
		}
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "profile.md"))
	// ρ at τ = 1, 1.25, 1.5, 2, 3, 4 and the score (area over [1, 4] / 3).
	for _, want := range []string{
		"| A | 0.33 | 0.33 | 0.33 | 0.67 | 0.67 | 0.67 | 0.556 |",
		"| B | 0.67 | 0.67 | 0.67 | 1.00 | 1.00 | 1.00 | 0.889 |",
		"| C | 0.33 | 0.33 | 0.33 | 0.33 | 0.33 | 0.33 | 0.333 |",
		"| C | not reached | 100 (> r_max) | 5 (1.00) |",
		"| A | 10 (1.00) | 30 (2.00) | not reached |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("profile.md lacks %q:\n%s", want, md)
		}
	}
	// The score from the figure's step function equals the table's.
	sums := make([]*compare.Summary, 3)
	for i, d := range []string{d1, d2, d3} {
		s, err := compare.ReadSummary(d)
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = s
	}
	p := compare.NewProfile([]string{"t1", "t2", "t3"}, sums, "seconds")
	if math.Abs(p.Score(1)-8.0/9) > 1e-12 || p.Rho(0, 1.99) != 1.0/3 || p.Rho(0, 2) != 2.0/3 {
		t.Errorf("B's score %v, A's ρ(1.99) %v ρ(2) %v", p.Score(1), p.Rho(0, 1.99), p.Rho(0, 2))
	}
}

// TestComparePeerDefaults: without --lr0s each method runs at its own
// default (a learning-rate-free peer at its authors' rate), and a method
// that steps on validation (plateau) makes every run hold out the same
// split.
func TestComparePeerDefaults(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, compareArgs(out, "--methods", "salsa,dog,plateau,schedule-free-sgd", "--epochs", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range []string{"salsa-lr0.01-s1", "dog-lr1-s1", "plateau-lr0.01-s1", "schedule-free-sgd-lr1-s1"} {
		rj := readRunJSON(t, filepath.Join(out, "runs", r))
		if rj.Plan.NTrain != 1800 || rj.Plan.NVal != 200 {
			t.Errorf("%s: n_train %d n_val %d: every run must hold out plateau's split", r, rj.Plan.NTrain, rj.Plan.NVal)
		}
	}
	if got := reportRows(t, out); strings.Join(got, ";") != "salsa;dog;plateau;schedule-free-sgd" {
		t.Errorf("rows %q", got)
	}
	// DoG's row gives the step its last update took (α·η_t, from
	// steps.csv.gz), in the report and in summary.json; Schedule-Free SGD's
	// step is its lr, so only summary.json has it; the others none.
	rows, err := trace.ReadTraceFile(filepath.Join(out, "runs", "dog-lr1-s1", "steps.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1].StepSize
	report := readFile(t, filepath.Join(out, "report.md"))
	if want := fmt.Sprintf("| 1; own step %.3g |", last); !strings.Contains(report, want) { // one seed: no [min, max]
		t.Errorf("report.md has no %q", want)
	}
	if n := strings.Count(report, "; own step "); n != 1 {
		t.Errorf("report.md has %d rows with an own step, want 1 (dog's)", n)
	}
	sf, err := trace.ReadTraceFile(filepath.Join(out, "runs", "schedule-free-sgd-lr1-s1", "steps.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var sum compare.Summary
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "summary.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Rows {
		if want := map[string]float64{"dog": last, "schedule-free-sgd": sf[len(sf)-1].StepSize}[r.Name]; r.Seeds[0].FinalStep != want {
			t.Errorf("summary.json: %s: final_step_size %v, want %v", r.Name, r.Seeds[0].FinalStep, want)
		}
	}
}

// TestCompareFailedRun: a candidate rate that blows up (NaN loss) fails
// alone: failed.txt, a "failed" line in the tuning table and the report's
// list; the tuned row takes the other rate; the next invocation skips it.
func TestCompareFailedRun(t *testing.T) {
	out := t.TempDir()
	args := compareArgs(out, "--methods", "shb-hand", "--lr0s", "0.1,1e38", "--grid", "shb-hand", "--epochs", "1")
	code, stdout, stderr := run(t, args...)
	if code != 0 || !strings.Contains(stdout, "trained 1, resumed 0, skipped 0 (finished before), failed 1") {
		t.Fatalf("exit %d: %q %s", code, stdout, stderr)
	}
	why, err := os.ReadFile(filepath.Join(out, "runs", "shb-hand-lr1e+38-s1", plots.FailedFile))
	if err != nil || !strings.Contains(string(why), "the training loss is NaN") {
		t.Errorf("failed.txt: %q, %v", why, err)
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| shb-hand | 1e+38 | failed |  |", "| shb-hand | 0.1 | 0.", "## Failed runs", "- runs/shb-hand-lr1e+38-s1: step "} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	if rows := reportRows(t, out); len(rows) != 1 || rows[0] != "shb-hand (tuned)" {
		t.Errorf("rows %q", rows)
	}
	code, stdout, stderr = run(t, args...)
	if code != 0 || !strings.Contains(stdout, "trained 0, resumed 0, skipped 1 (finished before), failed 0, skipped 1 (failed before)") ||
		!strings.Contains(stderr, "all finished before (1 failed before: remove a run's failed.txt to try it again), nothing to train") {
		t.Errorf("second run: exit %d: %q %s", code, stdout, stderr)
	}
}

// TestStrayLogs: a run directory holding epochs.csv rows but no
// checkpoint.gob (a run copied without it) is refused by salsa compare and
// by salsa train, and left as it was, instead of trained over; with
// epochs.csv's header alone (a run stopped in its first epoch) compare
// trains it again.
func TestStrayLogs(t *testing.T) {
	out := t.TempDir()
	args := compareArgs(out, "--methods", "cosine", "--epochs", "1")
	if code, _, stderr := run(t, args...); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "runs", "cosine-lr0.01-s1")
	if err := os.Remove(filepath.Join(dir, "checkpoint.gob")); err != nil {
		t.Fatal(err)
	}
	logs, err := os.ReadFile(filepath.Join(dir, "epochs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := dir + " holds the logs of 1 epochs (epochs.csv) but no checkpoint.gob"
	for _, a := range [][]string{args, append([]string{"train", "--out", dir, "--epochs", "1", "--no-plots"}, quick...)} {
		if code, _, stderr := run(t, a...); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s over a run without its checkpoint: exit %d, stderr %q; want %q", a[0], code, stderr, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "epochs.csv")); !bytes.Equal(b, logs) {
		t.Errorf("epochs.csv changed:\n%s\nwas\n%s", b, logs)
	}
	header, _, _ := bytes.Cut(logs, []byte("\n"))
	if err := os.WriteFile(filepath.Join(dir, "epochs.csv"), append(header, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, args...); code != 0 {
		t.Errorf("compare over a run stopped before its first epoch's end: exit %d: %s", code, stderr)
	}
}

// TestCompareKeepsRecordedSchedule: a run found finished with the options
// asked for, but planned with another schedule than its method plans now
// (a salsa-probe run from before the warm-up guard joined it), keeps the
// schedule it recorded, and compare says so in a note naming the field.
func TestCompareKeepsRecordedSchedule(t *testing.T) {
	out := t.TempDir()
	args := compareArgs(out, "--methods", "salsa-probe", "--epochs", "1")
	code, _, stderr := run(t, args...)
	if code != 0 || strings.Contains(stderr, "another schedule") {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "runs", "salsa-probe-lr0.01-s1")
	ck, err := train.ReadCheckpoint(dir)
	if err != nil || !ck.Plan.Schedule.Tail.WarmupGuard {
		t.Fatalf("checkpoint: %v; the guard on: %v", err, err == nil && ck.Plan.Schedule.Tail.WarmupGuard)
	}
	ck.Plan.Schedule.Tail.WarmupGuard = false // as recorded before the guard joined salsa-probe
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(ck); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.gob"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, args...)
	want := "note: 1 run(s) begun before with the same options were planned with another schedule than their method plans now, " +
		"and keep the one they recorded: salsa-probe-lr0.01-s1 (Tail.WarmupGuard: false, here true)"
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "all finished before") {
		t.Fatalf("second run: exit %d: %s\nwant %q", code, stderr, want)
	}
}
