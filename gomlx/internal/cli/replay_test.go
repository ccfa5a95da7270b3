package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

// TestReplayReproducesTraces runs the command on public traces of each kind
// (SALSA, SASA+ with forced BM, OLBM) and compares its output with the
// recorded events: same rows, floats within 1e-9 relative.
func TestReplayReproducesTraces(t *testing.T) {
	dir := conformance.PublicDir(t)
	for _, r := range []string{"logreg_salsa_lr1e-1", "lsq_sasa_bm_forced", "mlp_sasa_olbm", "mlp_salsa_lr1e-3_wd1e-4"} {
		code, out, errs := run(t, "replay", "--trace", filepath.Join(dir, r+".trace.csv.gz"), "--config", filepath.Join(dir, r+".meta.json"))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", r, code, errs)
		}
		want, err := os.ReadFile(filepath.Join(dir, r+".events.csv"))
		if err != nil {
			t.Fatal(err)
		}
		got, wl := strings.Split(out, "\n"), strings.Split(string(want), "\n")
		if len(got) != len(wl) || got[0] != wl[0] {
			t.Fatalf("%s: %d lines (header %q), want %d (%q)", r, len(got), got[0], len(wl), wl[0])
		}
		for i := range got {
			g, w := strings.Split(got[i], ","), strings.Split(wl[i], ",")
			if len(g) != len(w) {
				t.Fatalf("%s line %d: %q, want %q", r, i+1, got[i], wl[i])
			}
			for j := range g {
				if g[j] == w[j] {
					continue
				}
				a, b := parseF(g[j]), parseF(w[j])
				scale := math.Max(math.Abs(a), math.Abs(b))
				if (j == 3 || j == 4) && w[1] == "test" { // lower, upper: on the scale of the half-width (see replay's conformance test)
					scale = math.Max(scale, (parseF(w[4])-parseF(w[3]))/2)
				}
				if strings.Contains(w[j], ".") && math.Abs(a-b) <= 1e-9*scale {
					continue
				}
				t.Fatalf("%s line %d column %d: %q, want %q", r, i+1, j+1, got[i], wl[i])
			}
		}
	}
}

func parseF(s string) float64 {
	evs, err := trace.ReadEvents(strings.NewReader(trace.EventsHeader + "\n1,drop," + s + "\n"))
	if err != nil || len(evs) != 1 {
		return math.NaN()
	}
	return evs[0].NewLR
}

// TestReplayOtherSettings replays a SASA+ trace under other settings, the
// user feature: BM variance without statopt's stabilizers decides otherwise.
func TestReplayOtherSettings(t *testing.T) {
	dir := conformance.PublicDir(t)
	r := filepath.Join(dir, "lsq_sasa_mb")
	code, out, errs := run(t, "replay", "--trace", r+".trace.csv.gz", "--config", r+".meta.json", "--set", "variance=bm", "--set", "sign_check=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	evs, err := trace.ReadEvents(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for _, e := range evs {
		if e.Kind == schedule.KindDrop {
			drops++
		}
		if e.Kind == schedule.KindTest && e.Dof > 100 {
			t.Fatalf("step %d: dof %d: BM's dof is floor(√N)−1", e.Step, e.Dof)
		}
	}
	if drops == 0 || !strings.Contains(errs, "departs from the logged one") {
		t.Errorf("%d drops; stderr %q", drops, errs)
	}
	// Without --config: the paper's defaults from --n and --batch.
	code, out, errs = run(t, "replay", "--trace", r+".trace.csv.gz", "--method", "sasa+", "--n", "2000", "--batch", "20")
	if code != 0 || !strings.HasPrefix(out, trace.EventsHeader+"\n") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestReplayErrors(t *testing.T) {
	dir := conformance.PublicDir(t)
	r := filepath.Join(dir, "lsq_sasa_mb")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay"}, 2, "--run or --trace is required"},
		{[]string{"replay", "--trace", "/nonexistent.csv"}, 1, "/nonexistent.csv"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "theta=2"}, 1, "--set theta=2: must be in (0, 1]"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "zeta=0.1"}, 1, "--set zeta does nothing for --method"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "bogus=1"}, 1, "--set bogus: unknown key"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "nmin=x"}, 1, "--set nmin=x: not an integer"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz"}, 1, "--n and --batch are required"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--method", "nope"}, 1, `--method nope: method "nope": must be one of salsa, salsa-budget, salsa-probe, sasa+`},
		{[]string{"replay", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// synthSplit is a small 3-class problem, as in package train's tests.
func synthSplit(n, dim int, seed uint64) *train.Split {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &train.Split{Dim: dim, Labels: 3, X: make([]float32, n*dim), Y: make([]int32, n)}
	for i := range n {
		c := int32(r.IntN(3))
		s.Y[i] = c
		for j := range dim {
			s.X[i*dim+j] = float32(r.NormFloat64())
			if j%3 == int(c) {
				s.X[i*dim+j] += 0.8
			}
		}
	}
	return s
}

// replayLR0 is the --lr0 of the runs trainRun makes.
const replayLR0 = 0.05

// trainRun makes a real run directory: what salsa train does after loading
// the data (train.NewPlan, then train.Run, which writes run.json,
// steps.csv.gz and events.csv), 4 epochs of 30 steps on synthetic data, with
// tests every 10 steps.
func trainRun(t *testing.T, method string) string {
	t.Helper()
	var sets [][2]string
	batch, seed := 16, uint64(3)
	switch method {
	case probeVal: // salsa-probe with probe_val=1
		method, sets = "salsa-probe", [][2]string{{"probe_val", "1"}}
	case probeNormCap:
		method, batch, seed = "salsa-probe", 32, 1
	}
	o := train.Options{Dataset: "mnist", Model: "logreg", Method: method, Preset: "paper", LR0: replayLR0,
		Epochs: 4, Batch: batch, Seed: seed, Engine: "native", Sets: sets}
	sched, err := replay.Scheduler(method)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"nmin", "ktest", "slope_nmin", "slope_ktest"} { // those the method reads
		if schedule.KeyApplies(k, sched) {
			o.Sets = append(o.Sets, [2]string{k, "10"})
		}
	}
	if method == "shb-hand" {
		o.Drops = []int{1, 3}
	}
	return trainOptions(t, o, nil)
}

// trainOptions is trainRun's run with options of its own, and the plan
// changed by edit (if not nil) before it runs.
func trainOptions(t *testing.T, o train.Options, edit func(*train.Plan)) string {
	t.Helper()
	all, test := synthSplit(480, 24, 1), synthSplit(100, 24, 2)
	p, err := train.NewPlan(o, all.N())
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(p)
	}
	tr, val := all, (*train.Split)(nil)
	if p.NVal > 0 {
		n, d := p.NTrain, all.Dim
		tr = &train.Split{X: all.X[:n*d], Y: all.Y[:n], Dim: d, Labels: 3}
		val = &train.Split{X: all.X[n*d:], Y: all.Y[n:], Dim: d, Labels: 3}
	}
	dir := t.TempDir()
	if _, err := train.Run(context.Background(), p, dir, nil, 0, tr, val, test, nil, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayRunDir: salsa replay --run DIR reproduces the events.csv of a
// run of salsa train byte for byte, for a line search (salsa, with tests,
// a switch and drops), a drop test (sasa+), the hand schedule, the Adam
// warmup, a -val method and plateau (whose validation losses come from
// events.csv); --trace with --config run.json is the same.
// probeVal names salsa-probe with probe_val=1 in trainRun.
const probeVal = "salsa-probe/probe_val"

// probeNormCap names salsa-probe in trainRun with batch 32 and seed 1,
// where the probe accepts three windows (its probe_norm_cap reads ‖x‖²
// after each, and does not fire): its steps.csv.gz logs ‖x_{k+1}‖² (the x2
// column) until the decay.
const probeNormCap = "salsa-probe/probe_norm_cap"

func TestReplayRunDir(t *testing.T) {
	for _, method := range []string{"salsa", "sasa+", "shb-hand", "adam-warmup", "salsa-val", "plateau", probeVal, probeNormCap} {
		t.Run(method, func(t *testing.T) {
			dir := trainRun(t, method)
			want := readFile(t, filepath.Join(dir, "events.csv"))
			evs, err := trace.ReadEvents(strings.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[schedule.Kind]int{}
			for _, e := range evs {
				kinds[e.Kind]++
			}
			t.Logf("%s: %d events %v", method, len(evs), kinds)
			switch method {
			case "salsa":
				if kinds[schedule.KindSlopeTest] == 0 || kinds[schedule.KindSwitch] == 0 || kinds[schedule.KindTest] == 0 {
					t.Fatalf("the run made no slope test, switch or test: the replay would not check them")
				}
			case "sasa+":
				if kinds[schedule.KindTest] == 0 {
					t.Fatal("the run made no test")
				}
			case "shb-hand":
				if kinds[schedule.KindDrop] != 2 {
					t.Fatalf("%d drops, want 2", kinds[schedule.KindDrop])
				}
			case "salsa-val", "plateau":
				if kinds[schedule.KindValidation] != 4 {
					t.Fatalf("%d validation checks, want 4", kinds[schedule.KindValidation])
				}
			case probeVal:
				if kinds[schedule.KindValidation] == 0 || kinds[schedule.KindProbe] < 2 {
					t.Fatalf("%d validation checks, %d probe events: want the probe's start and a window", kinds[schedule.KindValidation], kinds[schedule.KindProbe])
				}
			case probeNormCap:
				rows, err := trace.ReadTraceFile(filepath.Join(dir, "steps.csv.gz"))
				if err != nil {
					t.Fatal(err)
				}
				if kinds[schedule.KindProbe] < 4 || !rows[0].HasX2 || rows[len(rows)-1].HasX2 {
					t.Fatalf("%d probe events, x2 at step 1 %v and at the last %v: want three windows, and ‖x‖² logged from the start, not in the decay",
						kinds[schedule.KindProbe], rows[0].HasX2, rows[len(rows)-1].HasX2)
				}
			}
			code, out, errs := run(t, "replay", "--run", dir)
			if code != 0 || out != want || errs != "" {
				t.Fatalf("replay --run: exit %d, stderr %q\n%s\nwant\n%s", code, errs, out, want)
			}
			code, out, errs = run(t, "replay", "--trace", filepath.Join(dir, "steps.csv.gz"), "--config", filepath.Join(dir, "run.json"))
			if method == "salsa-val" || method == "plateau" { // without --run, no validation losses
				if !strings.Contains(errs, "without --run there are none") {
					t.Fatalf("--config: exit %d, stderr %q", code, errs)
				}
				return
			}
			if method == probeVal { // its decisions need them
				if code != 1 || !strings.Contains(errs, "asks for validation losses during the probe: replay it with --run") {
					t.Fatalf("--config: exit %d, stderr %q", code, errs)
				}
				return
			}
			if method == probeNormCap { // the end's pick, made on the validation split, is left out
				var kept []string
				for _, l := range strings.SplitAfter(want, "\n") {
					if !strings.Contains(l, ",average,") {
						kept = append(kept, l)
					}
				}
				want = strings.Join(kept, "")
				if !strings.Contains(errs, "so it is left out") {
					t.Fatalf("--config: exit %d, stderr %q: want the note on the pick left out", code, errs)
				}
				errs = ""
			}
			if code != 0 || out != want || errs != "" {
				t.Fatalf("replay --trace --config run.json: exit %d, stderr %q\n%s\nwant\n%s", code, errs, out, want)
			}
		})
	}
}

// TestReplayLR0FromRunJSON: a line-search run logs the smoothed α_1 as its
// first lr; the replay starts from run.json's α_0, and starting from the
// first logged lr (what replay did before) gives other statistics.
func TestReplayLR0FromRunJSON(t *testing.T) {
	dir := trainRun(t, "salsa")
	rows, err := trace.ReadTraceFile(filepath.Join(dir, "steps.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := replay.ReadSettings(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Method != "salsa" || st.Config.SSLS.LR0 != replayLR0 || rows[0].LR == replayLR0 {
		t.Fatalf("method %s, α_0 %v, first logged lr %v: want salsa, %v and a smoothed first lr", st.Method, st.Config.SSLS.LR0, rows[0].LR, replayLR0)
	}
	want := readFile(t, filepath.Join(dir, "events.csv"))
	code, out, errs := run(t, "replay", "--run", dir, "--lr0", fmt.Sprint(rows[0].LR))
	if code != 0 || out == want || !strings.Contains(errs, "departs from the logged one at step 1") {
		t.Fatalf("from the first logged lr: exit %d, stderr %q; the events must differ", code, errs)
	}
	code, out, _ = run(t, "replay", "--run", dir, "--lr0", fmt.Sprint(replayLR0))
	if code != 0 || out != want {
		t.Fatalf("--lr0 %v: exit %d; the events must be the run's", replayLR0, code)
	}
	// Without a config a line search needs --lr0: the first lr is not α_0.
	code, _, errs = run(t, "replay", "--trace", filepath.Join(dir, "steps.csv.gz"), "--n", "480", "--batch", "16")
	if code != 1 || !strings.Contains(errs, "--method salsa without --config needs --lr0") {
		t.Fatalf("no --lr0: exit %d, stderr %q", code, errs)
	}
}

// TestReplayMethodNames: replay takes train's method names, with cut and
// warmup as aliases of shb-hand and adam-warmup; each name runs the
// scheduler train runs for it.
func TestReplayMethodNames(t *testing.T) {
	for _, m := range train.Methods {
		o := train.Options{Dataset: "mnist", Model: "logreg", Method: m, Preset: "paper", LR0: 0.1, Epochs: 4, Batch: 16, Engine: "native"}
		p, err := train.NewPlan(o, 480)
		if err != nil {
			t.Fatal(err)
		}
		c, err := replay.Canonical(m)
		s, err2 := replay.Scheduler(m)
		if err != nil || err2 != nil || c != m || s != p.Scheduler {
			t.Errorf("%s: canonical %q, scheduler %q (%v, %v); train runs %q", m, c, s, err, err2, p.Scheduler)
		}
	}
	for alias, m := range map[string]string{"cut": "shb-hand", "warmup": "adam-warmup"} {
		if c, err := replay.Canonical(alias); c != m || err != nil {
			t.Errorf("%s: %q, %v; want %s", alias, c, err, m)
		}
	}
	dir := trainRun(t, "shb-hand")
	want := readFile(t, filepath.Join(dir, "events.csv"))
	for _, m := range []string{"shb-hand", "cut"} {
		code, out, errs := run(t, "replay", "--run", dir, "--method", m)
		if code != 0 || out != want {
			t.Errorf("--method %s: exit %d, stderr %q\n%s\nwant\n%s", m, code, errs, out, want)
		}
	}
}

// TestReplayConfigWithoutOutcomes: a meta.json with the settings only (no
// steps, final_lr, drops, switches, n_tests, n_slope_tests, nor run and
// problem) replays as the full one.
func TestReplayConfigWithoutOutcomes(t *testing.T) {
	pub := conformance.PublicDir(t)
	r := filepath.Join(pub, "logreg_salsa_lr1e-1")
	var meta map[string]json.RawMessage
	if err := json.Unmarshal([]byte(readFile(t, r+".meta.json")), &meta); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]json.RawMessage{"config": meta["config"]})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, full, errs := run(t, "replay", "--trace", r+".trace.csv.gz", "--config", r+".meta.json")
	if code != 0 {
		t.Fatalf("full meta.json: exit %d: %s", code, errs)
	}
	code, out, errs := run(t, "replay", "--trace", r+".trace.csv.gz", "--config", cfg)
	if code != 0 || out != full {
		t.Fatalf("settings only: exit %d, stderr %q; the events must be the full meta.json's", code, errs)
	}
}

// TestReplayRunErrors: the errors of --run and of a run.json name the flag
// or key, the value and what is allowed.
func TestReplayRunErrors(t *testing.T) {
	dir := trainRun(t, "sasa+")
	rj := readFile(t, filepath.Join(dir, "run.json"))
	tmp := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noSchedule := write("a.json", strings.Replace(rj, `"schedule": {`, `"schedule_": {`, 2))
	badMethod := write("b.json", strings.Replace(rj, `"method": "sasa+"`, `"method": "sgd"`, 2))
	badSched := write("c.json", strings.Replace(rj, `"scheduler": "sasa+"`, `"scheduler": "cut"`, 1))
	unknown := write("d.json", strings.Replace(rj, `"SASAPlus": {`, `"SASAPlus": {"Bogus": 1, `, 2))
	neither := write("e.json", `{"run": "x"}`)
	steps := filepath.Join(dir, "steps.csv.gz")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay", "--run", dir, "--trace", steps}, 1, "--trace and --config apply only without --run"},
		{[]string{"replay", "--run", filepath.Join(tmp, "none")}, 1, "none/steps.csv.gz"},
		{[]string{"replay", "--run", dir, "--n", "3"}, 1, "--preset, --n and --batch apply only without --config or --run"},
		{[]string{"replay", "--run", dir, "--method", "sgd"}, 1, `--method sgd: method "sgd": must be one of salsa, salsa-budget, salsa-probe, sasa+, sasa, ssls, slope, shb-hand, adam-warmup`},
		{[]string{"replay", "--trace", steps, "--config", noSchedule}, 1, "a.json: run.json: missing key(s) plan.schedule"},
		{[]string{"replay", "--trace", steps, "--config", badMethod}, 1, `plan.options.method: method "sgd": must be one of`},
		{[]string{"replay", "--trace", steps, "--config", badSched}, 1, `plan.scheduler = "cut": method sasa+ runs scheduler "sasa+"`},
		{[]string{"replay", "--trace", steps, "--config", unknown}, 1, `plan.schedule: json: unknown field "Bogus"`},
		{[]string{"replay", "--trace", steps, "--config", neither}, 1, "has neither a plan key (a run.json of salsa train) nor a config key"},
		{[]string{"replay", "--run", dir, "--lr0", "-1"}, 1, "--lr0 -1: must be finite and > 0"},
		{[]string{"replay", "--run", dir, "--lr0", "0"}, 1, "--lr0 0: must be finite and > 0"},
		{[]string{"replay", "--trace", steps, "--n", "256", "--batch", "1000", "--lr0", "0.01"}, 1, "--n 256, --batch 1000, --lr0 0.01: schedule: b = 1000: the mini-batch size must be in [1, n=256]"},
		{[]string{"replay", "--trace", steps, "--n", "256", "--batch", "128", "--lr0", "0.01", "--preset", ""}, 1, `--preset "": must be paper or statopt`},
		// a budget left unset names its key, not the Go field
		{[]string{"replay", "--trace", steps, "--n", "256", "--batch", "128", "--lr0", "0.01", "--method", "cosine"}, 1, "--set total_steps=0 (not given): must be ≥ 1"},
		// --set lr0 used to win over --lr0 without a word
		{[]string{"replay", "--run", dir, "--lr0", "0.3", "--set", "lr0=0.5"}, 1, "--lr0 0.3 and --set lr0=0.5 both set α_0: give one"},
		{[]string{"replay", "--run", dir, "--method", "shb-hand", "--set", "drop_steps=,"}, 1, "--set drop_steps=,: an empty item"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestReplayRecordedSchedule: replay --run runs a run's recorded schedule
// as it is (schedule.Build), not as the method's fixed settings are today:
// a salsa-probe run whose run.json has the warm-up guard off, as those
// recorded before the guard joined salsa-probe have, replays without it.
func TestReplayRecordedSchedule(t *testing.T) {
	// a rate and batches on which the loss rises during the warm-up
	o := train.Options{Dataset: "mnist", Model: "logreg", Method: "salsa-probe", Preset: "paper", LR0: 1,
		Epochs: 4, Batch: 4, Seed: 3, Engine: "gomlx", Sets: [][2]string{{"nmin", "10"}, {"ktest", "10"}}}
	gomlxEvents := readFile(t, filepath.Join(trainOptions(t, o, nil), "events.csv")) // the guard's copies in the store
	o.Engine = "native"
	dir := trainOptions(t, o, nil)
	want := readFile(t, filepath.Join(dir, "events.csv"))
	if !strings.Contains(want, schedule.ReasonWarmupRise) {
		t.Fatalf("the guard did not end the warm-up, so the test checks nothing:\n%s", want)
	}
	if gomlxEvents != want {
		t.Fatalf("the gomlx engine's events:\n%s\nthe native engine's:\n%s", gomlxEvents, want)
	}
	if code, out, errs := run(t, "replay", "--run", dir); code != 0 || out != want {
		t.Fatalf("replay --run: exit %d, stderr %q; want the run's events", code, errs)
	}
	rj := filepath.Join(dir, "run.json")
	b := readFile(t, rj)
	off := strings.Replace(b, `"WarmupGuard": true`, `"WarmupGuard": false`, 1)
	if off == b {
		t.Fatalf("run.json has no \"WarmupGuard\": true:\n%s", b)
	}
	if err := os.WriteFile(rj, []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	// without the guard the warm-up goes on past the guard's decay, where
	// the trace has no line-search rates
	code, out, errs := run(t, "replay", "--run", dir)
	if code != 1 || out == want || !strings.Contains(errs, "the trace has no eta") {
		t.Fatalf("replay --run of a run.json without the guard: exit %d, stderr %q; want the replay without it, which needs rates the trace lacks", code, errs)
	}
	// train runs a plan's schedule as it is too (what a checkpoint resumes)
	dir = trainOptions(t, o, func(p *train.Plan) { p.Schedule.Tail.WarmupGuard = false })
	if got := readFile(t, filepath.Join(dir, "events.csv")); strings.Contains(got, schedule.ReasonWarmupRise) {
		t.Fatalf("a plan without the guard ran with it:\n%s", got)
	}
	if code, out, errs := run(t, "replay", "--run", dir); code != 0 || out != readFile(t, filepath.Join(dir, "events.csv")) {
		t.Fatalf("replay --run of the run without the guard: exit %d, stderr %q", code, errs)
	}
}

// TestReplayWarmupShare: replaying a recorded run (schedule.Build) with
// --set warmup_share works γ out again, as New would, so the key is not
// accepted and ignored; a run whose γ was already raised for its share
// cannot tell the γ before it, and another share or budget is refused
// unless --set gamma comes with it.
func TestReplayWarmupShare(t *testing.T) {
	o := train.Options{Dataset: "mnist", Model: "logreg", Method: "salsa-budget", Preset: "paper", LR0: replayLR0,
		Epochs: 4, Batch: 16, Seed: 3, Engine: "native", Sets: [][2]string{{"nmin", "10"}, {"ktest", "10"}}}
	dir := trainOptions(t, o, nil)
	want := readFile(t, filepath.Join(dir, "events.csv"))
	// γ raised, SSLS's rates leave the logged ones at once
	code, out, errs := run(t, "replay", "--run", dir, "--set", "warmup_share=0.05")
	if code != 0 || out == want || !strings.Contains(errs, "departs from the logged one at step 1") {
		t.Fatalf("--set warmup_share=0.05 on a run without it: exit %d, stderr %q; want γ raised, other rates:\n%s", code, errs, out)
	}
	o.Sets = append(o.Sets, [2]string{"warmup_share", "0.05"})
	shared := trainOptions(t, o, nil)
	if code, out, errs := run(t, "replay", "--run", shared); code != 0 || out != readFile(t, filepath.Join(shared, "events.csv")) {
		t.Fatalf("replay of the run with warmup_share=0.05: exit %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, "replay", "--run", shared, "--set", "warmup_share=0.5")
	if code != 1 || !strings.Contains(errs, "--set warmup_share=0.5: the config's γ (") || !strings.Contains(errs, "give --set gamma as well") {
		t.Fatalf("another share over a raised γ: exit %d, stderr %q", code, errs)
	}
	if code, _, errs = run(t, "replay", "--run", shared, "--set", "warmup_share=0.5", "--set", "gamma=0.2"); code != 0 {
		t.Fatalf("another share with γ given: exit %d, stderr %q", code, errs)
	}
}
