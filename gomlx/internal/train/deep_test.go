package train

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/salsaopt/salsa/trace"
)

// synthImages makes n random h×w×c images in 3 classes, each class brighter
// in its own third of the pixels.
func synthImages(n, h, w, c int, seed uint64) *Split {
	r := rand.New(rand.NewPCG(seed, 3))
	d := h * w * c
	s := &Split{X: make([]float32, n*d), Y: make([]int32, n), Dim: d, Labels: 3, H: h, W: w, C: c, Fill: make([]float32, c)}
	for i := range n {
		k := r.IntN(3)
		s.Y[i] = int32(k)
		for j := range d {
			s.X[i*d+j] = float32(r.NormFloat64())
			if j%3 == k {
				s.X[i*d+j] += 0.7
			}
		}
	}
	return s
}

// synthText makes n tokens of a vocabulary of v from a noisy cycle.
func synthText(n, v int, seed uint64) *Split {
	r := rand.New(rand.NewPCG(seed, 4))
	s := &Split{Tokens: make([]int, n), Labels: v}
	for i := range s.Tokens {
		s.Tokens[i] = i % v
		if r.IntN(5) == 0 {
			s.Tokens[i] = r.IntN(v)
		}
	}
	return s
}

// TestDeepResumeIsBitExact stops a resnet20 run (batch norm, augmentation)
// and an lstm run (dropout, carried state, clipping) in the middle of an
// epoch and at an epoch's end, resumes them, and requires the parameters,
// the scheduler and the outputs to equal an uninterrupted run's bit for bit.
// SALSA's line search runs at every step of these short runs. A third run
// trains resnet20 with Schedule-Free SGD, a peer whose direction runs on
// the host (salsagomlx.Host), evaluated at x after refreshing the batch-norm
// statistics there: its snapshot holds the direction's state. A fourth runs
// SALSA's line search along d_k (ls_dir=d), a fifth salsa-probe, stopped
// in its decay with the average of its iterates kept.
func TestDeepResumeIsBitExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two small deep models")
	}
	cases := []struct {
		model, dataset   string
		method           string
		batch            int
		sets             [][2]string
		train, val, test *Split
		stops            []int
	}{
		{"resnet20", "fashion-mnist", "salsa", 8, nil, synthImages(48, 8, 8, 1, 1), nil, synthImages(16, 8, 8, 1, 2), []int{4, 6}},
		{"lstm", "tinyshakespeare", "salsa", 4, [][2]string{{"bptt", "8"}}, synthText(4*(8*4+1), 12, 1), nil, synthText(4*(8*2+1), 12, 2), []int{3, 4}},
		{"resnet20", "fashion-mnist", "schedule-free-sgd", 8, nil, synthImages(48, 8, 8, 1, 1), nil, synthImages(16, 8, 8, 1, 2), []int{4, 6}},
		// The line search along d_k keeps its direction in the store too.
		{"resnet20", "fashion-mnist", "salsa", 8, [][2]string{{"ls_dir", "d"}}, synthImages(48, 8, 8, 1, 1), nil, synthImages(16, 8, 8, 1, 2), []int{4, 6}},
		// salsa-probe keeps the average of its decay's iterates in the
		// store, and at the end picks it on the validation split, with
		// the batch-norm statistics recomputed at the average.
		{"resnet20", "fashion-mnist", "salsa-probe", 8, nil, synthImages(45, 8, 8, 1, 1), synthImages(5, 8, 8, 1, 3), synthImages(16, 8, 8, 1, 2), []int{4, 11}},
	}
	for _, c := range cases {
		name := c.model + "/" + c.method
		if len(c.sets) > 0 && c.sets[0][0] == "ls_dir" {
			name += "/ls_dir=" + c.sets[0][1]
		}
		t.Run(name, func(t *testing.T) {
			o := Options{Dataset: c.dataset, Model: c.model, Method: c.method, Preset: "paper", LR0: 0.01,
				Epochs: 2, Batch: c.batch, Seed: 3, Engine: "gomlx", Sets: c.sets}
			mk := func() *Plan {
				n := c.train.N()
				if c.val != nil {
					n += c.val.N() // the plan holds out val_fraction of them
				}
				p, err := NewPlan(o, n)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			full := t.TempDir()
			want, err := Run(context.Background(), mk(), full, nil, 0, c.train, c.val, c.test, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ckWant, err := ReadCheckpoint(full)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := trace.ReadTraceFile(filepath.Join(full, "steps.csv.gz"))
			if err != nil || len(rows) != want.Steps {
				t.Fatalf("steps.csv.gz: %d rows, %v; want %d", len(rows), err, want.Steps)
			}
			searched := 0
			for _, r := range rows {
				if r.HasEta {
					searched++
				}
			}
			if searched == 0 && c.method == "salsa" {
				t.Fatalf("no step searched: the resume check would not cover the line search")
			}
			if c.method == "salsa-probe" {
				ev, _ := os.ReadFile(filepath.Join(full, "events.csv"))
				m := regexp.MustCompile(`(?m)^(\d+),decay,`).FindSubmatch(ev)
				if m == nil || !regexp.MustCompile(fmt.Sprintf(`(?m)^%d,average,%d,`, want.Steps, c.val.N())).Match(ev) {
					t.Fatalf("no decay, or no pick of the average on the validation split at step %d; events:\n%s", want.Steps, ev)
				}
				if d, _ := strconv.Atoi(string(m[1])); d >= c.stops[1] {
					t.Fatalf("the decay began at step %d: the stop at %d is not in it", d, c.stops[1])
				}
			}
			for _, stop := range c.stops {
				dir := t.TempDir()
				r, err := Run(context.Background(), mk(), dir, nil, stop, c.train, c.val, c.test, nil, nil)
				if err != nil || !r.Stopped || r.Steps != stop {
					t.Fatalf("stop at %d: %+v, %v", stop, r, err)
				}
				ck, err := ReadCheckpoint(dir)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Run(context.Background(), &ck.Plan, dir, ck, 0, c.train, c.val, c.test, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got.TestLoss != want.TestLoss || got.LR != want.LR || got.Steps != want.Steps {
					t.Fatalf("stop at %d: resumed run ends %+v, uninterrupted %+v", stop, got, want)
				}
				ckGot, _ := ReadCheckpoint(dir)
				if !bytes.Equal(ckGot.Engine, ckWant.Engine) || !bytes.Equal(ckGot.Scheduler, ckWant.Scheduler) ||
					!reflect.DeepEqual(ckGot.Pending, ckWant.Pending) || ckGot.Logged.Steps != ckWant.Logged.Steps {
					t.Fatalf("stop at %d: the resumed run's state differs", stop)
				}
				a, b := readAll(t, full), readAll(t, dir)
				for f := range a {
					if !bytes.Equal(a[f], b[f]) {
						t.Fatalf("stop at %d: %s differs after resuming", stop, f)
					}
				}
			}
			t.Logf("%s %s: %d steps (%d searched), test loss %.4f", c.model, c.method, want.Steps, searched, want.TestLoss)
		})
	}
}
