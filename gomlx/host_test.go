package salsagomlx

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/gomlx/models"
	"github.com/salsaopt/salsa/schedule"
)

// hostMethods are package direction's LRAware methods, each built for T.
func hostMethods[T direction.Float]() map[string]func(n int) (direction.LRAware[T], error) {
	return map[string]func(n int) (direction.LRAware[T], error){
		"schedule-free-sgd": func(n int) (direction.LRAware[T], error) {
			return direction.NewScheduleFree[T](direction.DefaultScheduleFreeSGD(), n)
		},
		"schedule-free-adamw": func(n int) (direction.LRAware[T], error) {
			return direction.NewScheduleFree[T](direction.DefaultScheduleFreeAdamW(), n)
		},
		"prodigy": func(n int) (direction.LRAware[T], error) {
			return direction.NewProdigy[T](direction.DefaultProdigy(), n)
		},
		"dadapt-sgd": func(n int) (direction.LRAware[T], error) {
			return direction.NewDAdaptSGD[T](direction.DefaultDAdaptSGD(), n)
		},
		"dog": func(n int) (direction.LRAware[T], error) { return direction.NewDoG[T](direction.DefaultDoG(), n) },
	}
}

// TestHostMatchesFloat64 runs each Host direction on softmax regression
// and compares it step by step with a float64 reference: the gradient of
// hostLinear (with the L2 term) and the same method of package direction
// in float64 on the flat vector [weights, bias]. The losses agree to float32
// rounding at every step, and so do the parameters and the evaluation point
// (Schedule-Free's x, DoG's average) after the last.
func TestHostMatchesFloat64(t *testing.T) {
	const in, out, n, steps = 7, 3, 16, 12
	mk32, mk64 := hostMethods[float32](), hostMethods[float64]()
	for name := range mk32 {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			w0 := normalWeights(r, in*out, 0.3)
			lr := 0.5
			if name == "schedule-free-adamw" {
				lr = 0.01
			}
			avg := name == "dog"
			cfg := Config{LR: lr, Direction: Host, WeightDecay: 0.01, DecayAll: true,
				Host: &HostConfig{New: mk32[name], Average: avg, AverageGamma: direction.DefaultPolyGamma}}
			tr, err := New(gobackend.GetBackend(), model.NewStore(), fixedLinear(w0, in, out), cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := &hostLinear{in: in, out: out, wd: cfg.WeightDecay, decayAll: true}
			x := make([]float64, in*out+out)
			for i, v := range w0 {
				x[i] = float64(v)
			}
			ref, _ := mk64[name](len(x))
			refAvg, _ := direction.NewPolyAverage[float64](direction.DefaultPolyGamma, len(x))
			d := make([]float64, len(x))
			s := &constSched{lr: lr}
			for step := 1; step <= steps; step++ {
				X, y := randBatch(r, n, in, out)
				xt, yt := tensors.FromFlatDataAndDimensions(X, n, in), tensors.FromFlatDataAndDimensions(y, n)
				_, st, err := tr.Run(s, xt, yt)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				loss, gw, gb := h.lossGrad(x[:in*out], x[in*out:], X, y)
				if !near(st.Loss, loss, 1e-5) {
					t.Fatalf("step %d: loss %v, want %v", step, st.Loss, loss)
				}
				ref.SetLR(lr)
				if err := ref.Compute(d, append(gw, gb...), x); err != nil {
					t.Fatal(err)
				}
				direction.Update(x, d, lr)
				if sf, ok := ref.(*direction.ScheduleFree[float64]); ok {
					sf.Train(x)
				}
				refAvg.Add(x)
			}
			got, err := gather(nil, tr.trainable)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if !near(float64(got[i]), x[i], 1e-4) {
					t.Fatalf("parameter %d: %v, want %v", i, got[i], x[i])
				}
			}
			// The evaluation point.
			want := x
			switch {
			case avg:
				want = refAvg.Average()
			case strings.HasPrefix(name, "schedule-free"):
				want = ref.(*direction.ScheduleFree[float64]).X()
			}
			if err := tr.BeginEval(nil); err != nil {
				t.Fatal(err)
			}
			at, _ := gather(nil, tr.trainable)
			if err := tr.EndEval(); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !near(float64(at[i]), want[i], 1e-4) {
					t.Fatalf("evaluation point %d: %v, want %v", i, at[i], want[i])
				}
			}
			if back, _ := gather(nil, tr.trainable); !equal32(back, got) {
				t.Fatal("EndEval did not restore the training parameters")
			}
		})
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHostSnapshot: a Host trainer's snapshot (version 4) holds the
// direction and the average, so that a trainer restored from it continues
// bit for bit; a QHM trainer refuses it, and a Host trainer refuses a QHM
// snapshot. An Optimizer refuses the Host direction, and the Host direction
// needs its constructor.
func TestHostSnapshot(t *testing.T) {
	const in, out, n = 5, 3, 8
	newHost := func() *Trainer {
		tr, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Direction: Host,
			Host: &HostConfig{New: hostMethods[float32]()["dog"], Average: true, AverageGamma: 8}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	r := rand.New(rand.NewPCG(1, 1))
	batches := make([][2]*tensors.Tensor, 6)
	for i := range batches {
		X, y := randBatch(r, n, in, out)
		batches[i][0], batches[i][1] = tensorsOf(X, y, in)
	}
	a, b, snap := stepAndRestore(t, newHost, batches[:3])
	for _, bt := range batches[3:] {
		la, err1 := a.Step(bt[0], bt[1])
		lb, err2 := b.Step(bt[0], bt[1])
		if err1 != nil || err2 != nil || la != lb {
			t.Fatalf("restored trainer: loss %v (%v), original %v (%v)", lb, err2, la, err1)
		}
	}
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if !bytes.Equal(sa, sb) {
		t.Fatal("the restored trainer's snapshot differs")
	}
	qhm, _ := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Beta: 0.9, Nu: 1})
	if err := qhm.UnmarshalBinary(snap); err == nil || !strings.Contains(err.Error(), "direction host") {
		t.Errorf("QHM trainer reading a Host snapshot: %v", err)
	}
	if _, err := qhm.Step(batches[0][0], batches[0][1]); err != nil {
		t.Fatal(err)
	}
	qs, _ := qhm.MarshalBinary()
	if err := newHost().UnmarshalBinary(qs); err == nil || !strings.Contains(err.Error(), "direction qhm") {
		t.Errorf("Host trainer reading a QHM snapshot: %v", err)
	}
	if _, err := NewOptimizer(model.NewStore(), Config{LR: 1, Direction: Host, Host: &HostConfig{New: hostMethods[float32]()["dog"]}}); err == nil ||
		!strings.Contains(err.Error(), "Trainer only") {
		t.Errorf("Optimizer with the Host direction: %v", err)
	}
	if _, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Direction: Host}); err == nil ||
		!strings.Contains(err.Error(), "Config.Host") {
		t.Errorf("Host direction without a constructor: %v", err)
	}
	// An average with Schedule-Free would be kept and never used: refused.
	sfAvg, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Direction: Host,
		Host: &HostConfig{New: hostMethods[float32]()["schedule-free-sgd"], Average: true, AverageGamma: 8}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfAvg.Step(batches[0][0], batches[0][1]); err == nil || !strings.Contains(err.Error(), "Config.Host.Average = true") {
		t.Errorf("Schedule-Free with an average: %v", err)
	}
}

// TestHostSnapshotBatchNorm: a fresh trainer restored from a Host snapshot
// (version 4) of a model with batch norm knows which model variables are not
// trainable before it has built a graph, so that an evaluation at
// Schedule-Free's x runs at once (salsa eval on a finished run) and gives
// the original's numbers; version 3 had made the statistics trainable and
// BeginEval failed on the parameter count.
func TestHostSnapshotBatchNorm(t *testing.T) {
	const in, out, n = 5, 3, 8
	net := bnNet(out, 0)
	newHost := func() *Trainer {
		tr, err := New(gobackend.GetBackend(), model.NewStore(), net, Config{LR: 1e-3, Direction: Host,
			Host: &HostConfig{New: hostMethods[float32]()["schedule-free-adamw"]}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	r := rand.New(rand.NewPCG(2, 2))
	var batches [][2]*tensors.Tensor
	var xs, ys []*tensors.Tensor
	for range 3 {
		X, y := randBatch(r, n, in, out)
		x, yt := tensorsOf(X, y, in)
		xs, ys = append(xs, x), append(ys, yt)
		batches = append(batches, [2]*tensors.Tensor{x, yt})
	}
	a, b, _ := stepAndRestore(t, newHost, batches)
	eval := func(tr *Trainer) (float64, float64) {
		t.Helper()
		if err := tr.BeginEval(slices.Values(xs)); err != nil {
			t.Fatalf("BeginEval: %v", err)
		}
		l, acc, err := tr.Evaluate(xs[0], ys[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.EndEval(); err != nil {
			t.Fatal(err)
		}
		return l, acc
	}
	lb, ab := eval(b)
	la, aa := eval(a)
	if la != lb || aa != ab {
		t.Errorf("restored trainer evaluates to (%v, %v), the original to (%v, %v)", lb, ab, la, aa)
	}
}

// TestHostRefusesRollback: a scheduler that rolls the parameters back is
// refused by a Host trainer before its first step, with the scheduler left
// at step 0 (before, the refusal came at the first Save, after End).
func TestHostRefusesRollback(t *testing.T) {
	const in, out, n = 5, 3, 8
	tr, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 1, Direction: Host,
		Host: &HostConfig{New: hostMethods[float32]()["dog"]}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.NewTail(schedule.TailConfig{Steps: 100, Fraction: 0.2, FromSwitch: true, Probe: true, ProbeEarly: true, ProbeRollback: true},
		testSALSAAlong(t, 0.01, 0, schedule.AlongG))
	if err != nil {
		t.Fatal(err)
	}
	X, y := randBatch(rand.New(rand.NewPCG(1, 1)), n, in, out)
	x, yt := tensorsOf(X, y, in)
	if _, _, err := tr.Run(s, x, yt); err == nil || !strings.Contains(err.Error(), "rolls the parameters back") {
		t.Errorf("Run: %v, want the refusal", err)
	}
	if s.Step() != 0 {
		t.Errorf("scheduler at step %d, want 0", s.Step())
	}
}

// stepAndRestore steps a new trainer over the batches (inputs, labels) and
// restores its snapshot into another new one, which it returns beside it
// with the snapshot.
func stepAndRestore(t *testing.T, newTrainer func() *Trainer, batches [][2]*tensors.Tensor) (a, b *Trainer, snap []byte) {
	t.Helper()
	a = newTrainer()
	for _, bt := range batches {
		if _, err := a.Step(bt[0], bt[1]); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b = newTrainer()
	if err := b.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	return a, b, snap
}
