package train

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/data"
	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// synth makes a small separable-ish 3-class problem.
func synth(n, dim int, seed uint64) *Split {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &Split{Dim: dim, Labels: 3, X: make([]float32, n*dim), Y: make([]int32, n)}
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

func plan(t *testing.T, method string, n int, sets ...[2]string) *Plan {
	t.Helper()
	o := Options{Dataset: "mnist", Model: "logreg", Method: method, Preset: "paper", LR0: 0.01,
		Epochs: 12, Batch: 32, Seed: 7, Engine: "native", Sets: sets}
	if method == "shb-hand" {
		o.Drops = []int{4, 8}
	}
	if lr, ok := MethodLR0(method); ok { // the peers' authors' rate, as salsa train
		o.LR0 = lr
	}
	p, err := NewPlan(o, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"epochs.csv", "steps.csv.gz", "events.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "epochs.csv" { // drop the wall-clock column, found by its name
			lines := strings.Split(string(b), "\n")
			col := slices.Index(strings.Split(lines[0], ","), "seconds")
			for i, l := range lines {
				if fs := strings.Split(l, ","); col >= 0 && col < len(fs) {
					lines[i] = strings.Join(slices.Delete(fs, col, col+1), ",")
				}
			}
			b = []byte(strings.Join(lines, "\n"))
		}
		out[f] = b
	}
	return out
}

// TestResumeIsBitExact stops runs at several steps (mid-epoch and at an
// epoch's end), resumes them, and requires the parameters, the scheduler
// state and every output file to equal an uninterrupted run's, bit for bit.
func TestResumeIsBitExact(t *testing.T) {
	train, test := synth(640, 24, 1), synth(200, 24, 2)
	for _, name := range []string{"salsa", "shb-hand", "adam-warmup", "salsa-val", "salsa-budget-rollback", "salsa-probe",
		"schedule-free-sgd", "schedule-free-adamw", "prodigy", "dadapt-sgd", "dog", "cosine", "wsd", "plateau"} {
		t.Run(name, func(t *testing.T) {
			method := strings.TrimSuffix(name, "-rollback")
			n := train.N()
			var sets [][2]string // short windows, so that the tests run
			if method == "salsa" || method == "salsa-val" {
				sets = [][2]string{{"nmin", "10"}, {"ktest", "10"}, {"slope_nmin", "10"}, {"slope_ktest", "10"}}
			}
			if name == "salsa-budget-rollback" {
				// the probe's kept parameters are in the checkpoint
				sets = [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}}
			}
			p := plan(t, method, n, sets...)
			tr, val := train, (*Split)(nil)
			if p.NVal > 0 {
				tr = &Split{X: train.X[:p.NTrain*train.Dim], Y: train.Y[:p.NTrain], Dim: train.Dim, Labels: 3}
				val = &Split{X: train.X[p.NTrain*train.Dim:], Y: train.Y[p.NTrain:], Dim: train.Dim, Labels: 3}
			}
			full := t.TempDir()
			want, err := Run(context.Background(), plan(t, method, n, p.Options.Sets...), full, nil, 0, tr, val, test, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ckWant, err := ReadCheckpoint(full)
			if err != nil {
				t.Fatal(err)
			}
			// The peers but plateau make no decisions (their rate is a
			// function of the step): their state is the direction's.
			if _, peer := Peer(method); method != "adam-warmup" && (!peer || method == "plateau") && ckWant.NEvents == 0 {
				t.Fatalf("%s made no test or decision in %d steps: the resume check would not cover them", method, want.Steps)
			}
			t.Logf("%s: %d steps, %d events, %d drops", method, want.Steps, ckWant.NEvents, ckWant.Drops)
			if name == "salsa-probe" { // its probe_norm_cap reads ‖x‖² until the decay
				rows, err := trace.ReadTraceFile(filepath.Join(full, "steps.csv.gz"))
				if err != nil || len(rows) == 0 || !rows[0].HasX2 || rows[len(rows)-1].HasX2 {
					t.Fatalf("steps.csv.gz: %v: want ‖x‖² logged from step 1 and not in the decay", err)
				}
			}
			stops := []int{7, p.StepsPerEpoch, 2*p.StepsPerEpoch + 3}
			if name == "salsa-budget-rollback" {
				// also stop just before the rollback, after the last Save
				ev, _ := os.ReadFile(filepath.Join(full, "events.csv"))
				m := regexp.MustCompile(`(?m)^(\d+),decay,[^,]*,rollback$`).FindSubmatch(ev)
				if m == nil {
					t.Fatalf("no rollback in %d steps: the resume check would not cover it; events:\n%s", want.Steps, ev)
				}
				r, _ := strconv.Atoi(string(m[1]))
				stops = append(stops, r-1)
			}
			if name == "salsa-probe" {
				// also stop in the decay, with the average of its iterates
				// in the checkpoint, and the run ends with the pick
				ev, _ := os.ReadFile(filepath.Join(full, "events.csv"))
				m := regexp.MustCompile(`(?m)^(\d+),decay,`).FindSubmatch(ev)
				pick := regexp.MustCompile(fmt.Sprintf(`(?m)^%d,average,%d,`, want.Steps, val.N())).Match(ev)
				if m == nil || !pick {
					t.Fatalf("no decay (%q) or no pick of the average on %d validation examples at step %d; events:\n%s", m, val.N(), want.Steps, ev)
				}
				r, _ := strconv.Atoi(string(m[1]))
				stops = append(stops, r+2, want.Steps-1)
			}
			for _, stop := range stops {
				dir := t.TempDir()
				r, err := Run(context.Background(), plan(t, method, n, p.Options.Sets...), dir, nil, stop, tr, val, test, nil, nil)
				if err != nil || !r.Stopped || r.Steps != stop {
					t.Fatalf("stop at %d: %+v, %v", stop, r, err)
				}
				ck, err := ReadCheckpoint(dir)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Run(context.Background(), &ck.Plan, dir, ck, 0, tr, val, test, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got.TestAcc != want.TestAcc || got.TestLoss != want.TestLoss || got.LR != want.LR || got.Steps != want.Steps {
					t.Fatalf("stop at %d: resumed run ends %+v, uninterrupted %+v", stop, got, want)
				}
				ckGot, _ := ReadCheckpoint(dir)
				if !bytes.Equal(ckGot.Engine, ckWant.Engine) || !bytes.Equal(ckGot.Scheduler, ckWant.Scheduler) ||
					!reflect.DeepEqual(ckGot.Pending, ckWant.Pending) || ckGot.NEvents != ckWant.NEvents || ckGot.Logged.Steps != ckWant.Logged.Steps || ckGot.Logged.Events != ckWant.Logged.Events {
					t.Fatalf("stop at %d: the resumed run's state differs: logged %+v vs %+v, pending %d vs %d, events %d vs %d", stop, ckGot.Logged, ckWant.Logged, len(ckGot.Pending), len(ckWant.Pending), ckGot.NEvents, ckWant.NEvents)
				}
				a, b := readAll(t, full), readAll(t, dir)
				for f := range a {
					if !bytes.Equal(a[f], b[f]) {
						t.Fatalf("stop at %d: %s differs after resuming", stop, f)
					}
				}
			}
		})
	}
}

// TestStepFailureHint: a step that fails on a non-finite input to the
// scheduler or the direction, with a finite loss (the update overflowed),
// gets the same advice as a non-finite loss; another failure gets none.
func TestStepFailureHint(t *testing.T) {
	ck := &Checkpoint{Epoch: 1}
	for _, c := range []struct {
		loss float64
		err  error
		hint bool
	}{
		{math.NaN(), errors.New("anything"), true},
		{1, fmt.Errorf("engine: %w", fmt.Errorf("schedule: step 3: X1D = -Inf: %w", schedule.ErrNonFinite)), true},
		{1, fmt.Errorf("engine: %w", direction.ErrNonFinite), true},
		{1, errors.New("schedule: step 3: D2 = -1: a squared norm must be ≥ 0"), false},
	} {
		err := stepFailure(t.TempDir(), ck, 3, c.loss, c.err)
		if got := strings.Contains(strings.ToLower(err.Error()), "try a smaller --lr0"); got != c.hint {
			t.Errorf("loss %v, %v: %v: hint %v, want %v", c.loss, c.err, err, got, c.hint)
		}
	}
}

// TestNaNStopsAndKeepsCheckpoint: a diverging run stops at the step whose
// loss is not finite, names it, and leaves the last checkpoint as it was.
func TestNaNStopsAndKeepsCheckpoint(t *testing.T) {
	train, test := synth(640, 24, 1), synth(200, 24, 2)
	ctx := context.Background()
	// A run that blows up in its first epoch: no checkpoint yet, the logs
	// of the steps before the failure are written.
	sane := plan(t, "shb-hand", train.N())
	hot := *sane
	hot.Schedule.Cut.LR0, hot.Schedule.Cut.DropSteps = 1e38, nil
	dir := t.TempDir()
	_, err := Run(ctx, &hot, dir, nil, 0, train, nil, test, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "step ") || !strings.Contains(err.Error(), "the training loss is") ||
		!strings.Contains(err.Error(), "no checkpoint was written") || !strings.Contains(err.Error(), "smaller --lr0") {
		t.Fatalf("err = %v, want the step, the non-finite loss, that no checkpoint exists and what to try", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.gob")); err == nil {
		t.Error("a checkpoint was written by a failed run")
	}
	// A run stopped at step 5, resumed on data that makes the loss
	// infinite: the checkpoint of step 5 stays byte for byte, the message
	// names it, and steps.csv.gz holds the 5 good steps.
	dir = t.TempDir()
	if r, err := Run(ctx, sane, dir, nil, 5, train, nil, test, nil, nil); err != nil || !r.Stopped {
		t.Fatal(r, err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
	bad := *train
	bad.X = append([]float32(nil), train.X...)
	for i := range bad.X {
		bad.X[i] *= 1e36
	}
	ck, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, sane, dir, ck, 0, &bad, nil, test, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "step 6 ") || !strings.Contains(err.Error(), "checkpoint of step 5") {
		t.Fatalf("err = %v, want step 6 and the checkpoint of step 5 named", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
	if !bytes.Equal(before, after) {
		t.Error("the checkpoint changed")
	}
	f, err := os.Open(filepath.Join(dir, "steps.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := trace.ReadTrace(zr)
	if err != nil || len(rows) != 5 {
		t.Errorf("steps.csv.gz: %d rows (%v), want the 5 good steps", len(rows), err)
	}
}

// An interrupted run (ctx done: Ctrl-C) finishes its step, writes a
// checkpoint, and resumes to the same end as an uninterrupted one.
func TestInterruptWritesCheckpoint(t *testing.T) {
	train, test := synth(640, 24, 1), synth(200, 24, 2)
	p := plan(t, "salsa", train.N())
	full := t.TempDir()
	want, err := Run(context.Background(), p, full, nil, 0, train, nil, test, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	r, err := Run(ctx, plan(t, "salsa", train.N()), dir, nil, 0, train, nil, test, func(int, int, schedule.Result, float64) {
		if steps++; steps == 30 {
			cancel()
		}
	}, nil)
	if err != nil || !r.Stopped || !r.Interrupted || r.Steps != 30 {
		t.Fatalf("interrupted run: %+v, %v; want stopped at step 30", r, err)
	}
	ck, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	was := *ck // Run works on a copy: what it advances must stay as read
	np, ne := len(ck.Pending), len(ck.Epochs)
	if np == 0 || ne == 0 {
		t.Fatalf("checkpoint at step 30: %d pending rows, %d epochs; the test needs both", np, ne)
	}
	got, err := Run(context.Background(), &ck.Plan, dir, ck, 0, train, nil, test, nil, nil)
	if err != nil || got.TestLoss != want.TestLoss || got.Steps != want.Steps {
		t.Fatalf("resumed: %+v, %v; uninterrupted %+v", got, err, want)
	}
	if ck.Step != was.Step || ck.Epoch != was.Epoch || ck.Pos != was.Pos || ck.Seconds != was.Seconds ||
		len(ck.Pending) != np || len(ck.Epochs) != ne ||
		!bytes.Equal(ck.Scheduler, was.Scheduler) || !bytes.Equal(ck.Engine, was.Engine) || !reflect.DeepEqual(ck.Plan.Options, was.Plan.Options) {
		t.Errorf("Run changed the checkpoint it resumed from: step %d → %d, epoch %d → %d, %d → %d pending rows, %d → %d epochs",
			was.Step, ck.Step, was.Epoch, ck.Epoch, np, len(ck.Pending), ne, len(ck.Epochs))
	}
	// a plan with the engine left to Run keeps it so: the choice goes to
	// run.json, not back into the caller's plan
	auto := plan(t, "salsa", train.N())
	auto.Options.Engine = "auto"
	if _, err := Run(context.Background(), auto, t.TempDir(), nil, 5, train, nil, test, nil, nil); err != nil || auto.Options.Engine != "auto" {
		t.Errorf("Run(plan with --engine auto): engine %q after the run, %v; want it left auto", auto.Options.Engine, err)
	}
}

func TestOptionErrors(t *testing.T) {
	base := Options{Dataset: "mnist", Model: "logreg", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 3, Batch: 32}
	cases := []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Dataset = "imagenet" }, "--dataset imagenet: must be one of mnist, fashion-mnist, cifar10, cifar10-synthetic, tinyshakespeare, wikitext2"},
		{func(o *Options) { o.Model = "resnet" }, "--model resnet: must be one of logreg, mlp, cnn, resnet20, resnet18, lstm, lstm-paper"},
		{func(o *Options) { o.Model = "lstm" }, "--model lstm is a language model: --dataset must be tinyshakespeare or wikitext2"},
		{func(o *Options) { o.Dataset = "tinyshakespeare" }, "--dataset tinyshakespeare is text: --model must be lstm or lstm-paper"},
		{func(o *Options) { o.Sets = [][2]string{{"bptt", "10"}} }, "--set bptt applies to the language models only"},
		{func(o *Options) { o.Sets = [][2]string{{"augment", "1"}} }, "--set augment applies to the convolutional models only"},
		{func(o *Options) { o.Sets = [][2]string{{"decay", "some"}} }, "--set decay=some: must be all or weights"},
		{func(o *Options) { o.Limit = -1 }, "--limit -1: must be ≥ 0"},
		{func(o *Options) { o.TestLimit = -2 }, "--test-limit -2: must be ≥ 0"},
		{func(o *Options) { o.Method = "sgd" }, "--method sgd: must be one of"},
		{func(o *Options) { o.Preset = "x" }, "--preset x: must be paper or statopt"},
		{func(o *Options) { o.LR0 = -1 }, "--lr0 -1: must be finite and > 0"},
		{func(o *Options) { o.Epochs = 0 }, "--epochs 0: must be ≥ 1"},
		// float32 holds the rate in both engines: 1e-307 was refused mid-run
		{func(o *Options) { o.LR0 = 1e-307 }, "--lr0 1e-307: must be within float32's range, where the engines keep the rate"},
		{func(o *Options) { o.LR0 = 1e39 }, "--lr0 1e+39: must be within float32's range"},
		// warmup_epochs is named as typed, with the steps it makes
		{func(o *Options) { o.Method = "cosine"; o.Sets = [][2]string{{"warmup_epochs", "1000"}} }, "--set warmup_epochs=1000 (20000 steps): must be < the budget's 60 steps"},
		// the budget overflowed int: cosine's total_steps was -2
		{func(o *Options) { o.Method, o.Epochs = "cosine", math.MaxInt }, "--epochs 9223372036854775807: must be ≤ "},
		{func(o *Options) { o.Batch = -1 }, "--batch -1: must be ≥ 1 (or 0 for the model's default, 128 for logreg)"},
		{func(o *Options) { o.Method, o.Drops = "shb-hand", []int{2, 1} }, "--drops [2 1]: the epochs must be strictly increasing (1 after 2)"},
		{func(o *Options) { o.Method, o.Drops = "shb-hand", []int{0} }, "--drops [0]: epoch 0: a cut comes after an epoch ≥ 1"},
		{func(o *Options) { o.Drops = []int{1} }, "--drops applies to --method shb-hand only"},
		{func(o *Options) { o.Sets = [][2]string{{"momentum", "1"}} }, "--set momentum=1: must be in [0, 1)"},
		// warmup_guard keeps a copy of the parameters: it needs the probe's rollback
		{func(o *Options) { o.Sets = [][2]string{{"warmup_guard", "1"}} }, "--set warmup_guard does nothing for --method salsa; it applies to salsa-budget"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"warmup_guard", "0"}} }, "--set warmup_guard does nothing for --method salsa-probe, which has average, decay_guard, probe, probe_early, probe_norm_cap, probe_rollback, probe_settle, warmup_guard on"},
		{func(o *Options) {
			o.Method, o.Sets = "salsa-budget", [][2]string{{"probe", "1"}, {"warmup_guard", "1"}}
		}, "--set warmup_guard=1: needs Probe and ProbeRollback (--set probe=1 --set probe_rollback=1"},
		{func(o *Options) { o.Sets = [][2]string{{"momentum", "0.5abc"}} }, "--set momentum=0.5abc: not a finite number"},
		{func(o *Options) { o.Method = "adam-warmup"; o.Sets = [][2]string{{"adam_eps", "-1"}} }, "--method adam-warmup: --set adam_eps = -1: must be in (0, +Inf)"},
		{func(o *Options) { o.Method = "adam-warmup"; o.Sets = [][2]string{{"adam_beta1", "2"}} }, "--method adam-warmup: --set adam_beta1 = 2: must be in [0, 1)"},
		{func(o *Options) { o.Sets = [][2]string{{"wd", "1e-4 5"}} }, "--set wd=1e-4 5: not a finite number"},
		// Errors name the key the user typed, not the Go field.
		{func(o *Options) { o.Sets = [][2]string{{"theta", "2"}} }, "--set theta=2: must be in (0, 1]"},
		{func(o *Options) { o.Sets = [][2]string{{"slope_theta", "0.5"}, {"theta", "2"}} }, "--set theta=2: must be in (0, 1]"},
		{func(o *Options) { o.Sets = [][2]string{{"nmin", "-3"}} }, "--set nmin=-3: must be ≥ 3"},
		{func(o *Options) { o.Sets = [][2]string{{"m", "-1"}} }, "--set m=-1: must be ≥ 0"},
		{func(o *Options) { o.Sets = [][2]string{{"salsa_drop_after", "-1"}} }, "--set salsa_drop_after=-1: must be ≥ 0"},
		{func(o *Options) { o.Method = "sasa+"; o.Sets = [][2]string{{"drop_after", "-1"}} }, "--set drop_after=-1: must be ≥ 0"},
		{func(o *Options) { o.Method = "salsa-val"; o.Sets = [][2]string{{"patience", "-1"}} }, "--set patience=-1: must be ≥ 0"},
		{func(o *Options) { o.Method = "shb-hand"; o.Drops = []int{1}; o.Sets = [][2]string{{"tau", "3"}} }, "--set tau=3: must be in (0, 1)"},
		// A key the method never reads is refused, with the methods it
		// applies to.
		{func(o *Options) { o.Method = "sasa+"; o.Sets = [][2]string{{"adam_beta1", "0.5"}} }, "--set adam_beta1 does nothing for --method sasa+; it applies to adam-warmup"},
		{func(o *Options) { o.Method = "sasa+"; o.Sets = [][2]string{{"zeta", "0.1"}} }, "--set zeta does nothing for --method sasa+; it applies to sasa"},
		{func(o *Options) { o.Sets = [][2]string{{"drop_after", "10"}} }, "--set drop_after does nothing for --method salsa; it applies to sasa+, sasa, slope, sasa+-val"},
		{func(o *Options) { o.Sets = [][2]string{{"patience", "2"}} }, "--set patience does nothing for --method salsa; it applies to salsa-val, sasa+-val"},
		{func(o *Options) { o.Method = "adam-warmup"; o.Sets = [][2]string{{"momentum", "0.5"}} }, "--set momentum does nothing for --method adam-warmup"},
		// a bool key's error gives the value as typed
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"probe", "1"}, {"probe_keep_rate", "1"}}
		}, "--set probe_keep_rate=1: needs ProbeEarly and ProbeRollback"},
		{func(o *Options) { o.Method = "salsa-budget"; o.Sets = [][2]string{{"probe_keep_rate", "2"}} }, "--set probe_keep_rate=2: must be 1 or 0 (true or false)"},
		{func(o *Options) {
			o.Method = "salsa-probe"
			o.Sets = [][2]string{{"probe_keep_rate", "1"}, {"probe_backoff", "4"}}
		}, "--set probe_backoff=4: not with ProbeKeepRate"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"probe_level_copy", "1"}} }, "--set probe_level_copy does nothing for --method salsa-probe, whose switches (average, decay_guard, probe, probe_early, probe_norm_cap, probe_rollback, probe_settle, warmup_guard on) refuse it (schedule: TailConfig.ProbeNormCap = true: not with"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"probe_norm_cap", "0"}} }, "--set probe_norm_cap does nothing for --method salsa-probe, which has average, decay_guard, probe, probe_early, probe_norm_cap, probe_rollback, probe_settle, warmup_guard on"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"probe_backoff", "0.5"}} }, "--set probe_backoff=0.5: must be finite and ≥ 1"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"warmup_share", "1"}} }, "--set warmup_share=1: must be in [0, 1) (0: off)"},
		{func(o *Options) { o.Sets = [][2]string{{"warmup_share", "0.2"}} }, "--set warmup_share does nothing for --method salsa; it applies to salsa-budget, salsa-probe"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"probe_backoff", "0"}} }, "--set probe_backoff=0: must be finite and ≥ 1"},
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}, {"probe_backoff", "4"}, {"probe_keep_rate", "1"}}
		}, "--set probe_backoff=4: not with ProbeKeepRate"},
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}, {"probe_level_copy", "1"}, {"probe_keep_rate", "1"}}
		}, "--set probe_level_copy=1: not with ProbeKeepRate"},
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}, {"probe_level_copy", "1"}, {"probe_backoff", "4"}}
		}, "--set probe_level_copy=1: not with ProbeBackoff 4"},
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}, {"probe_norm_cap", "1"}, {"probe_level_copy", "1"}}
		}, "--set probe_norm_cap=1: not with ProbeLevelCopy (--set probe_level_copy=1)"},
		// SASA+'s drop keys where the decay begins at the switch
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"tau", "0.5"}} }, "--set tau does nothing for --method salsa-probe: its decay begins at the switch, so SASA+ never drops"},
		{func(o *Options) { o.Method = "salsa-budget"; o.Sets = [][2]string{{"salsa_drop_after", "9"}} }, "--set salsa_drop_after does nothing for --method salsa-budget with decay_from_switch=1 (the default)"},
		{func(o *Options) {
			o.Method = "salsa-budget"
			o.Sets = [][2]string{{"decay_from_switch", "0"}, {"keep_momentum", "1"}, {"decay_from_switch", "1"}}
		}, "--set decay_from_switch given twice (0, then 1): give each key once"},
		// τ, the factor of a drop, for schedules that never drop in salsa
		// train (a constant or warmup schedule; --drops is shb-hand's)
		{func(o *Options) { o.Method = "adam-warmup"; o.Sets = [][2]string{{"tau", "0.5"}} }, "--set tau does nothing for --method adam-warmup; it applies to salsa, salsa-budget, sasa+, sasa, slope, shb-hand, salsa-val, sasa+-val, plateau"},
		{func(o *Options) { o.Method = "prodigy"; o.Sets = [][2]string{{"tau", "0.5"}} }, "--set tau does nothing for --method prodigy; it applies to"},
		{func(o *Options) { o.Method = "schedule-free-sgd"; o.Sets = [][2]string{{"tau", "0.5"}} }, "--set tau does nothing for --method schedule-free-sgd; it applies to"},
		{func(o *Options) { o.Method = "shb-hand"; o.Sets = [][2]string{{"c", "0.1"}} }, "--set c does nothing for --method shb-hand; it applies to salsa, salsa-budget, salsa-probe, ssls, salsa-val"},
		{func(o *Options) { o.Method = "salsa-probe"; o.Sets = [][2]string{{"probe_rollback", "0"}} }, "--set probe_rollback does nothing for --method salsa-probe, which has average, decay_guard, probe, probe_early, probe_norm_cap, probe_rollback, probe_settle, warmup_guard on; to choose them one by one, use --method salsa-budget"},
		{func(o *Options) { o.Sets = [][2]string{{"warmup_epochs", "1"}} }, "--set warmup_epochs does nothing for --method salsa; it applies to adam-warmup"},
		{func(o *Options) {
			o.Method = "adam-warmup"
			o.Sets = [][2]string{{"warmup_epochs", "1"}, {"warmup_steps", "3"}}
		}, "--set warmup_steps and warmup_epochs both set"},
		{func(o *Options) { o.Sets = [][2]string{{"lr0", "0.1"}} }, "--set lr0: use --lr0"},
		{func(o *Options) { o.Method = "shb-hand"; o.Sets = [][2]string{{"drop_steps", "10"}} }, "--set drop_steps: use --drops"},
		{func(o *Options) { o.Sets = [][2]string{{"nope", "2"}} }, "--set nope: unknown key; the keys are accept_equal, adam_beta1, adam_beta2, adam_eps, augment, average, bptt, c, clip, composite, cooldown, decay, decay_cuts, decay_fraction, decay_from_switch, decay_guard, delta"},
		{func(o *Options) { o.Sets = [][2]string{{"wd", "x"}} }, "--set wd=x: not a finite number"},
		{func(o *Options) { o.Batch = 1000 }, "--batch 1000: must be ≤ the 640 training examples"},
		// The peers' keys are checked (every engine runs them).
		{func(o *Options) { o.Method, o.Sets = "schedule-free-sgd", [][2]string{{"momentum", "0"}} }, "--method schedule-free-sgd: --set momentum = 0: must be in (0, 1)"},
		{func(o *Options) { o.Method, o.Sets = "prodigy", [][2]string{{"nu", "0.5"}} }, "--set nu does nothing for --method prodigy"},
		{func(o *Options) { o.Method, o.Sets = "cosine", [][2]string{{"adam_beta1", "0.5"}} }, "--set adam_beta1 does nothing for --method cosine; it applies to adam-warmup, schedule-free-adamw, prodigy"},
		{func(o *Options) { o.Method, o.Sets = "prodigy", [][2]string{{"warmup_epochs", "1"}} }, "--set warmup_epochs does nothing for --method prodigy; it applies to adam-warmup, schedule-free-sgd, schedule-free-adamw, cosine, wsd"},
		{func(o *Options) { o.Method, o.Sets = "cosine", [][2]string{{"total_steps", "0"}} }, "--set total_steps=0: must be ≥ 1"},
	}
	// Keys that apply to the method are accepted.
	for _, c := range [][3]string{{"salsa", "salsa_drop_after", "5"}, {"salsa", "theta", "0.25"}, {"salsa", "c", "0.1"},
		{"sasa+", "drop_after", "5"}, {"sasa", "zeta", "0.1"}, {"salsa-val", "patience", "2"}, {"slope", "slope_ktest", "3"},
		{"adam-warmup", "adam_beta1", "0.5"}, {"adam-warmup", "warmup_steps", "4"}, {"shb-hand", "momentum", "0.5"}, {"salsa", "wd", "0"},
		{"schedule-free-sgd", "momentum", "0.5"}, {"schedule-free-adamw", "adam_beta2", "0.99"}, {"prodigy", "adam_beta1", "0.5"},
		{"dadapt-sgd", "momentum", "0.9"}, {"cosine", "warmup_epochs", "0"}, {"wsd", "decay_fraction", "0.1"},
		{"cosine", "total_steps", "100"}, {"plateau", "patience", "2"}, {"plateau", "val_fraction", "0.2"}} {
		o := base
		o.Method, o.Sets = c[0], [][2]string{{c[1], c[2]}}
		if _, err := NewPlan(o, 640); err != nil {
			t.Errorf("--method %s --set %s=%s: %v", c[0], c[1], c[2], err)
		}
	}
	// salsa-probe holds out 10% of an image set, or val_fraction of it, for
	// the pick of the average of its decay's iterates, and probe_val=1 uses
	// the same split for its validation loss
	for _, c := range []struct {
		sets [][2]string
		nval int
		err  string
	}{
		{[][2]string{{"probe_val", "1"}}, 64, ""},
		{[][2]string{{"probe_val", "1"}, {"val_fraction", "0.25"}}, 160, ""},
		{nil, 64, ""},
		{[][2]string{{"val_fraction", "0.25"}}, 160, ""},
	} {
		o := base
		o.Method, o.Sets = "salsa-probe", c.sets
		p, err := NewPlan(o, 640)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("salsa-probe --set %v: err = %v, want %q", c.sets, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("salsa-probe --set %v: %v", c.sets, err)
		case c.err == "" && (p.NVal != c.nval || p.Schedule.Tail.ProbeVal != (len(c.sets) > 0 && c.sets[0][0] == "probe_val")):
			t.Errorf("salsa-probe --set %v: %d examples held out, ProbeVal %v; want %d", c.sets, p.NVal, p.Schedule.Tail.ProbeVal, c.nval)
		}
	}
	// probe_welch_wd=1 turns Welch's window test on where wd > 0 only, and
	// run.json's schedule (which replay reads) records the outcome.
	for _, c := range []struct {
		method string
		sets   [][2]string
		welch  bool
		err    string
	}{
		{"salsa-probe", [][2]string{{"probe_welch_wd", "1"}, {"wd", "1e-4"}}, true, ""},
		{"salsa-probe", [][2]string{{"wd", "5e-5"}, {"probe_welch_wd", "1"}}, true, ""},
		{"salsa-probe", [][2]string{{"probe_welch_wd", "1"}, {"wd", "0"}}, false, ""},
		{"salsa-probe", [][2]string{{"probe_welch_wd", "1"}}, true, ""}, // logreg's default wd, 1e-4
		{"salsa-probe", [][2]string{{"probe_welch_wd", "0"}, {"wd", "1e-4"}}, false, ""},
		{"salsa-budget", [][2]string{{"probe", "1"}, {"probe_welch_wd", "1"}}, true, ""},
		{"salsa-budget", [][2]string{{"probe_welch_wd", "1"}, {"wd", "0"}}, false, "--set probe_welch_wd=1 (Welch's window test where wd > 0): schedule: TailConfig.ProbeWelch = true: needs Probe (--set probe=1"},
		{"salsa-probe", [][2]string{{"probe_welch_wd", "1"}, {"probe_t", "1"}}, false, "TailConfig.ProbeWelch = true: not with ProbeT (--set probe_t=1)"},
		{"salsa-probe", [][2]string{{"probe_welch_wd", "2"}}, false, "--set probe_welch_wd=2: must be 0 or 1"},
		{"salsa-probe", [][2]string{{"probe_welch_wd", "1"}, {"probe_welch", "1"}}, false, "both set Welch's window test"},
		{"salsa", [][2]string{{"probe_welch_wd", "1"}}, false, "--set probe_welch_wd does nothing for --method salsa; it applies to salsa-budget, salsa-probe"},
	} {
		o := base
		o.Method, o.Sets = c.method, c.sets
		p, err := NewPlan(o, 640)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s --set %v: err = %v, want %q", c.method, c.sets, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s --set %v: %v", c.method, c.sets, err)
		case c.err == "" && p.Schedule.Tail.ProbeWelch != c.welch:
			t.Errorf("%s --set %v: ProbeWelch %v, want %v", c.method, c.sets, p.Schedule.Tail.ProbeWelch, c.welch)
		}
	}
	// A cut past the budget is allowed, with a warning (as MultiStepLR).
	late := base
	late.Method, late.Drops = "shb-hand", []int{2, 5}
	if _, err := NewPlan(late, 640); err != nil {
		t.Errorf("--drops 2,5 --epochs 3: %v", err)
	}
	if w := late.Warnings(); len(w) != 1 || !strings.Contains(w[0], "after epoch 5 never happens") {
		t.Errorf("--drops 2,5 --epochs 3: warnings %q", w)
	}
	// with decay_from_switch=0 SASA+ runs until the last 20% and drops by τ
	kept := base
	kept.Method, kept.Sets = "salsa-budget", [][2]string{{"decay_from_switch", "0"}, {"tau", "0.5"}}
	if p, err := NewPlan(kept, 640); err != nil || p.Schedule.SASAPlus.Tau != 0.5 {
		t.Errorf("salsa-budget --set decay_from_switch=0 --set tau=0.5: %v", err)
	}
	// A BPTT length is at most a training stream less its last token: 36
	// tokens in 4 streams of 9 take bptt 8, and bptt 9 is refused, not cut.
	text := Options{Dataset: "tinyshakespeare", Model: "lstm", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Batch: 4}
	for _, c := range []struct {
		bptt string
		err  string
	}{
		{"8", ""},
		{"9", "--set bptt=9: must be ≤ 8, the length of a training stream less one (36 training tokens in --batch 4 streams of 9)"},
	} {
		text.Sets = [][2]string{{"bptt", c.bptt}}
		p, err := NewPlan(text, 36)
		switch {
		case c.err == "" && (err != nil || p.BPTT != 8 || p.StepsPerEpoch != 1):
			t.Errorf("lstm --set bptt=%s on 36 tokens: %v; want bptt 8 in 1 step", c.bptt, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("lstm --set bptt=%s on 36 tokens: err = %v, want %q", c.bptt, err, c.err)
		}
	}
	for _, c := range cases {
		o := base
		c.mod(&o)
		_, err := NewPlan(o, 640)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", o, err, c.want)
		}
	}
}

// --limit and --test-limit cut the training and test splits (and a text's
// validation split), and the plan records the sizes that run.
func TestSplitsLimits(t *testing.T) {
	src := &Source{Text: &data.Corpus{Vocab: []string{"a", "b"}, Train: make([]int, 1000), Valid: make([]int, 30), Test: make([]int, 40)}}
	// 500 tokens in the default 32 streams are 15 long: bptt 8 fits in them
	o := Options{Dataset: "tinyshakespeare", Model: "lstm", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Engine: "gomlx", Limit: 500, TestLimit: 25,
		Sets: [][2]string{{"bptt", "8"}}}
	p, err := NewPlan(o, src.NTrain())
	if err != nil {
		t.Fatal(err)
	}
	tr, val, test, err := Splits(src, p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N() != 500 || val.N() != 25 || test.N() != 25 || p.NTest != 25 {
		t.Errorf("text: train %d val %d test %d (plan %d), want 500 25 25 (25): --test-limit cuts the validation split too", tr.N(), val.N(), test.N(), p.NTest)
	}
	o.TestLimit = 0
	if p, err = NewPlan(o, src.NTrain()); err != nil {
		t.Fatal(err)
	}
	if _, val, test, _ = Splits(src, p); test.N() != 40 || val.N() != 30 || p.NTest != 40 {
		t.Errorf("text without --test-limit: val %d test %d (plan %d), want 30 40", val.N(), test.N(), p.NTest)
	}

	img := &Source{Images: data.SyntheticCIFAR10(1)}
	o = Options{Dataset: "cifar10-synthetic", Model: "mlp", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Engine: "gomlx", Limit: 300, TestLimit: 70}
	if p, err = NewPlan(o, img.NTrain()); err != nil {
		t.Fatal(err)
	}
	tr, _, test, err = Splits(img, p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N() != 300 || test.N() != 70 || len(test.X) != 70*test.Dim || p.NTest != 70 {
		t.Errorf("images: train %d test %d (%d floats, plan %d), want 300 70", tr.N(), test.N(), len(test.X), p.NTest)
	}

	// Beyond a split's end: an error naming the flag and the size, not a
	// silent cut to what there is.
	o.Limit = img.NTrain() + 1
	if _, err := NewPlan(o, img.NTrain()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--limit %d: the training split has %d", img.NTrain()+1, img.NTrain())) {
		t.Errorf("--limit beyond the training split: %v", err)
	}
	o.Limit, o.TestLimit = 300, img.Images.TestX.N+1
	if p, err = NewPlan(o, img.NTrain()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Splits(img, p); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--test-limit %d: the test split has %d examples", o.TestLimit, img.Images.TestX.N)) {
		t.Errorf("--test-limit beyond the test split: %v", err)
	}
	o = Options{Dataset: "tinyshakespeare", Model: "lstm", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Engine: "gomlx", Limit: 500, TestLimit: 35,
		Sets: [][2]string{{"bptt", "8"}}}
	if p, err = NewPlan(o, src.NTrain()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Splits(src, p); err == nil || !strings.Contains(err.Error(), "--test-limit 35: the validation split has 30 tokens") {
		t.Errorf("--test-limit beyond the text's validation split: %v", err)
	}
}

// The checkpoint holds at most one epoch of steps: an epoch's save writes
// that epoch's rows only, so a run's I/O grows linearly, not quadratically,
// with its length. A run stopped mid-epoch leaves its partial epoch in the
// logs, for plotting; resuming replaces it. A log shortened behind the
// run's back is an error, not a silent gap.
func TestCheckpointIsBounded(t *testing.T) {
	train, test := synth(640, 24, 1), synth(200, 24, 2)
	sizeAt := func(epochs int) (int64, *Checkpoint, string) {
		p := plan(t, "shb-hand", train.N())
		dir := t.TempDir()
		if _, err := Run(context.Background(), p, dir, nil, epochs*p.StepsPerEpoch, train, nil, test, nil, nil); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(dir, "checkpoint.gob"))
		if err != nil {
			t.Fatal(err)
		}
		ck, err := ReadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size(), ck, dir
	}
	s2, ck2, _ := sizeAt(2)
	s10, ck10, _ := sizeAt(10)
	if len(ck2.Pending) != 0 || len(ck10.Pending) != 0 {
		t.Fatalf("at an epoch's end the checkpoint holds %d and %d pending rows, want 0", len(ck2.Pending), len(ck10.Pending))
	}
	// 8 more epochs of 20 steps: ≥ 160 rows of ≥ 40 bytes if the rows were
	// kept; 8 epoch rows of < 150 bytes each if not.
	if grow := s10 - s2; grow > 8*150 {
		t.Errorf("checkpoint.gob grows by %d bytes from epoch 2 to 10: it keeps the steps", grow)
	}
	if ck10.Logged.Steps <= ck2.Logged.Steps {
		t.Errorf("steps.csv.gz: %d bytes after 10 epochs, %d after 2", ck10.Logged.Steps, ck2.Logged.Steps)
	}

	p := plan(t, "shb-hand", train.N())
	dir := t.TempDir()
	if _, err := Run(context.Background(), p, dir, nil, p.StepsPerEpoch+7, train, nil, test, nil, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := trace.ReadTraceFile(filepath.Join(dir, "steps.csv.gz"))
	if err != nil || len(rows) != p.StepsPerEpoch+7 {
		t.Fatalf("a run stopped at step %d logs %d steps (%v)", p.StepsPerEpoch+7, len(rows), err)
	}
	ck, err := ReadCheckpoint(dir)
	if err != nil || len(ck.Pending) != 7 {
		t.Fatalf("checkpoint mid-epoch: %d pending rows (%v), want 7", len(ck.Pending), err)
	}
	if err := os.Truncate(filepath.Join(dir, "events.csv"), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), &ck.Plan, dir, ck, 0, train, nil, test, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "events.csv has 3 bytes") {
		t.Errorf("resume with a shortened events.csv: %v, want an error naming it", err)
	}
}

// TestChooseEngine: auto takes the native engine for logreg only when the
// plan needs nothing it lacks; naming it for such a plan is an error. Before,
// --set clip was accepted on logreg and ignored by the native engine.
func TestChooseEngine(t *testing.T) {
	for _, c := range []struct {
		engine string
		sets   [][2]string
		want   string // the engine, or a part of the error
	}{
		{"auto", nil, "native"},
		{"auto", [][2]string{{"clip", "0.5"}}, "gomlx"},
		{"auto", [][2]string{{"decay", "weights"}}, "gomlx"},
		{"native", nil, "native"},
		{"native", [][2]string{{"clip", "0.5"}}, "--engine native does not clip the gradient: --set clip=0.5 needs --engine gomlx"},
		{"native", [][2]string{{"decay", "weights"}}, "--set decay=weights needs --engine gomlx"},
		{"gomlx", [][2]string{{"clip", "0.5"}}, "gomlx"},
	} {
		o := Options{Dataset: "mnist", Model: "logreg", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Batch: 4, Seed: 1,
			Engine: c.engine, Sets: c.sets}
		p, err := NewPlan(o, 40)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ChooseEngine(p)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) || (err == nil) != (c.want == "native" || c.want == "gomlx") {
			t.Errorf("--engine %s %v: %q, want %q", c.engine, c.sets, got, c.want)
		}
	}
}

// TestPlanWarnings: settings that cannot act within the run's steps are
// accepted with a warning; before, a budget shorter than the run or a switch
// forced after its end went by without a word.
func TestPlanWarnings(t *testing.T) {
	for _, c := range []struct {
		method string
		sets   [][2]string
		want   string // "" for no warning
	}{
		{"cosine", nil, ""},
		{"wsd", [][2]string{{"total_steps", "5"}}, "--set total_steps=5: the run makes 60 steps; the steps past the budget keep its last rate"},
		{"salsa-budget", [][2]string{{"total_steps", "1"}}, "--set total_steps=1: the run makes 60 steps"},
		{"salsa", [][2]string{{"force_switch_at", "100000"}}, "--set force_switch_at=100000: the run makes 60 steps, so it never forces the switch"},
		{"salsa", [][2]string{{"force_switch_at", "60"}}, ""},
		{"adam-warmup", [][2]string{{"warmup_epochs", "1000"}}, "the warmup of 20000 steps outlasts the run's 60 steps"},
	} {
		o := Options{Dataset: "mnist", Model: "logreg", Method: c.method, Preset: "paper", LR0: 0.01, Epochs: 3, Batch: 32, Sets: c.sets}
		p, err := NewPlan(o, 640)
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.sets, err)
		}
		w := p.Warnings()
		if c.want == "" && len(w) > 0 || c.want != "" && (len(w) != 1 || !strings.Contains(w[0], c.want)) {
			t.Errorf("%s %v: warnings %q, want %q", c.method, c.sets, w, c.want)
		}
	}
}
