package train

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		if f == "epochs.csv" { // drop the wall-clock column
			var lines []string
			for _, l := range strings.Split(string(b), "\n") {
				if i := strings.LastIndexByte(l, ','); i > 0 {
					l = l[:i]
				}
				lines = append(lines, l)
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
	for _, method := range []string{"salsa", "shb-hand", "adam-warmup", "salsa-val"} {
		t.Run(method, func(t *testing.T) {
			n := train.N()
			p := plan(t, method, n, [2]string{"nmin", "10"}, [2]string{"ktest", "10"}, [2]string{"slope_nmin", "10"}, [2]string{"slope_ktest", "10"})
			tr, val := train, (*Split)(nil)
			if p.NVal > 0 {
				tr = &Split{X: train.X[:p.NTrain*train.Dim], Y: train.Y[:p.NTrain], Dim: train.Dim, Labels: 3}
				val = &Split{X: train.X[p.NTrain*train.Dim:], Y: train.Y[p.NTrain:], Dim: train.Dim, Labels: 3}
			}
			full := t.TempDir()
			want, err := Run(plan(t, method, n, p.Options.Sets...), full, false, 0, tr, val, test, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ckWant, err := ReadCheckpoint(full)
			if err != nil {
				t.Fatal(err)
			}
			if method != "adam-warmup" && len(ckWant.Events) == 0 {
				t.Fatalf("%s made no test or decision in %d steps: the resume check would not cover them", method, want.Steps)
			}
			t.Logf("%s: %d steps, %d events, %d drops", method, want.Steps, len(ckWant.Events), ckWant.Drops)
			for _, stop := range []int{7, p.StepsPerEpoch, 2*p.StepsPerEpoch + 3} {
				dir := t.TempDir()
				r, err := Run(plan(t, method, n, p.Options.Sets...), dir, false, stop, tr, val, test, nil, nil)
				if err != nil || !r.Stopped || r.Steps != stop {
					t.Fatalf("stop at %d: %+v, %v", stop, r, err)
				}
				ck, err := ReadCheckpoint(dir)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Run(&ck.Plan, dir, true, 0, tr, val, test, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got.TestAcc != want.TestAcc || got.TestLoss != want.TestLoss || got.LR != want.LR || got.Steps != want.Steps {
					t.Fatalf("stop at %d: resumed run ends %+v, uninterrupted %+v", stop, got, want)
				}
				ckGot, _ := ReadCheckpoint(dir)
				if !bytes.Equal(ckGot.Engine, ckWant.Engine) || !bytes.Equal(ckGot.Scheduler, ckWant.Scheduler) ||
					!reflect.DeepEqual(ckGot.Rows, ckWant.Rows) || !reflect.DeepEqual(ckGot.Events, ckWant.Events) {
					t.Fatalf("stop at %d: the resumed run's state differs", stop)
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

// TestNaNStopsAndKeepsCheckpoint: a diverging run stops at the step whose
// loss is not finite, names it, and leaves the last checkpoint as it was.
func TestNaNStopsAndKeepsCheckpoint(t *testing.T) {
	train, test := synth(640, 24, 1), synth(200, 24, 2)
	dir := t.TempDir()
	// One epoch at a sane rate first, so that a checkpoint exists.
	sane := plan(t, "shb-hand", train.N())
	if _, err := Run(sane, dir, false, sane.StepsPerEpoch, train, nil, test, nil, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
	ck, _ := ReadCheckpoint(dir)
	ck.Plan.Schedule.Cut.LR0 = 1e38
	ck.Plan.Schedule.Cut.DropSteps = nil
	_, err := Run(&ck.Plan, t.TempDir(), false, 0, train, nil, test, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "the training loss is") || !strings.Contains(err.Error(), "step ") {
		t.Fatalf("err = %v, want the step and the non-finite loss named", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
	if !bytes.Equal(before, after) {
		t.Error("the checkpoint changed")
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
		{func(o *Options) { o.Method = "sgd" }, "--method sgd: must be one of"},
		{func(o *Options) { o.Preset = "x" }, "--preset x: must be paper or statopt"},
		{func(o *Options) { o.LR0 = -1 }, "--lr0 -1: must be finite and > 0"},
		{func(o *Options) { o.Epochs = 0 }, "--epochs 0: must be ≥ 1"},
		{func(o *Options) { o.Batch = -1 }, "--batch -1: must be ≥ 1 (or 0 for the model's default, 128 for logreg)"},
		{func(o *Options) { o.Method, o.Drops = "shb-hand", []int{2, 1} }, "--drops [2 1]: epochs must be strictly increasing in [1, 3)"},
		{func(o *Options) { o.Drops = []int{1} }, "--drops applies to --method shb-hand only"},
		{func(o *Options) { o.Sets = [][2]string{{"momentum", "1"}} }, "--set momentum=1: must be in [0, 1)"},
		{func(o *Options) { o.Sets = [][2]string{{"theta", "2"}} }, "SASAPlusConfig.Theta = 2: must be in (0, 1]"},
		{func(o *Options) { o.Sets = [][2]string{{"nope", "2"}} }, "--set nope: unknown key"},
		{func(o *Options) { o.Sets = [][2]string{{"wd", "x"}} }, "--set wd=x: not a finite number"},
		{func(o *Options) { o.Batch = 1000 }, "--batch 1000: must be ≤ the 640 training examples"},
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
