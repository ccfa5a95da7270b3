package train

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/direction"
)

// peerPlan is gomlxPlan at the peer's authors' rate.
func peerPlan(t testing.TB, modelName, method string, n int, epochs, batch int) *Plan {
	t.Helper()
	lr, _ := MethodLR0(method)
	p, err := NewPlan(Options{Dataset: "mnist", Model: modelName, Method: method, Preset: "paper", LR0: lr,
		Epochs: epochs, Batch: batch, Seed: 1, Engine: "gomlx"}, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPeersGoMLXMatchNative runs every learning-rate-free and schedule-free
// peer on logreg with the gomlx engine (the direction on the host,
// salsagomlx.Host) and the native engine side by side on the same batches:
// the losses, ⟨x⁺,d⟩ and ‖d‖² agree step by step to float32 rounding, and
// so does the evaluation at the method's point (Schedule-Free's x, DoG's
// average), which leaves the gomlx engine's state bit for bit as it was.
func TestPeersGoMLXMatchNative(t *testing.T) {
	const n, dim = 500, 20
	sp, test := gomlxSynth(n, dim, 4), gomlxSynth(200, dim, 5)
	for _, method := range []string{"schedule-free-sgd", "schedule-free-adamw", "prodigy", "dadapt-sgd", "dog"} {
		t.Run(method, func(t *testing.T) {
			plan := peerPlan(t, "logreg", method, n, 2, 32)
			g := newGoMLXPair(t, plan, sp)
			q := newGoMLXPair(t, plan, sp)
			var err error
			if q.eng, err = Engines["native"](plan, sp); err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 30; k++ {
				pos := k % plan.StepsPerEpoch
				idx := Perm(1, 1+k/plan.StepsPerEpoch, n)[pos*32 : min(pos*32+32, n)]
				a, err1 := g.eng.Step(g.sched, Batch{Idx: idx, Step: k + 1})
				b, err2 := q.eng.Step(q.sched, Batch{Idx: idx, Step: k + 1})
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if a.LR != b.LR || !gomlxNear(a.Loss, b.Loss, 1e-4) || !gomlxNear(a.X1D, b.X1D, 1e-3) || !gomlxNear(a.D2, b.D2, 1e-3) {
					t.Fatalf("step %d: gomlx %+v, native %+v", k+1, a, b)
				}
			}
			before, err := g.eng.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			gl, ga, err1 := g.eng.Evaluate(test)
			nl, na, err2 := q.eng.Evaluate(test)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !gomlxNear(gl, nl, 1e-4) || ga != na {
				t.Errorf("evaluation: gomlx %v %v, native %v %v", gl, ga, nl, na)
			}
			after, _ := g.eng.MarshalBinary()
			if !bytes.Equal(before, after) {
				t.Errorf("the evaluation changed the gomlx engine's state")
			}
			// The evaluation point is not the training point.
			e := g.eng.(*gomlxEngine)
			yl, _, err := e.evaluate(test)
			if err != nil {
				t.Fatal(err)
			}
			if ev := e.tr.EvalPoint(); ev != (method == "schedule-free-sgd" || method == "schedule-free-adamw" || method == "dog") || ev && yl == gl {
				t.Errorf("EvalPoint %v; loss at the training point %v, at the evaluation point %v", ev, yl, gl)
			}
			t.Logf("test loss %.6f (native %.6f), acc %.3f", gl, nl, ga)
		})
	}
}

// storeVals returns the values of the variables of store whose path
// satisfies keep, by path.
func storeVals(t *testing.T, store *model.Store, keep func(v *model.Variable) bool) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for v := range store.Scope("/model").IterVariables() {
		if !keep(v) {
			continue
		}
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		out[v.Path()] = slices.Clone(tensors.MustCopyFlatData[float32](val))
	}
	return out
}

func setVals(t *testing.T, store *model.Store, vals map[string][]float32) {
	t.Helper()
	for p, x := range vals {
		v := store.GetVariable(p)
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(x, v.Shape().Dimensions...)); err != nil {
			t.Fatal(err)
		}
	}
}

func trainable(v *model.Variable) bool   { return v.Trainable }
func runningStat(v *model.Variable) bool { return !v.Trainable }

func equalVals(a, b map[string][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for p, x := range a {
		if !slices.Equal(x, b[p]) {
			return false
		}
	}
	return true
}

// TestScheduleFreeBatchNormRefresh trains resnet20 with Schedule-Free SGD
// and checks its evaluation: the parameters are moved to x, and the
// batch-norm running statistics used in eval mode are those of
// training-mode forward passes at x over the refresh batches (computed here
// independently, by gradient steps' forward passes at x on a copy of the
// trainer), which differ from the same passes at y; the evaluation equals
// an eval-mode pass at x with those statistics; and afterwards y and the
// training statistics are back bit for bit.
func TestScheduleFreeBatchNormRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("trains resnet20")
	}
	tr, test := synthImages(48, 8, 8, 1, 1), synthImages(16, 8, 8, 1, 2)
	p := peerPlan(t, "resnet20", "schedule-free-sgd", tr.N(), 2, 8)
	p.Options.Dataset = "fashion-mnist"
	g := newGoMLXPair(t, p, tr)
	e := g.eng.(*gomlxEngine)
	for k := range 6 {
		if _, err := g.eng.Step(g.sched, Batch{Idx: Perm(1, 1, tr.N())[k*8 : k*8+8], Epoch: 1, Step: k + 1}); err != nil {
			t.Fatal(err)
		}
	}
	store := e.tr.Store()
	y, statsY := storeVals(t, store, trainable), storeVals(t, store, runningStat)
	if len(statsY) == 0 {
		t.Fatal("resnet20 has no running statistics")
	}
	snap, err := g.eng.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Inside the evaluation: the parameters at x, the refreshed statistics.
	if err := e.tr.BeginEval(e.refreshBatches()); err != nil {
		t.Fatal(err)
	}
	atX, statsEval := storeVals(t, store, trainable), storeVals(t, store, runningStat)
	evalLoss, evalAcc, err := e.evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.tr.EndEval(); err != nil {
		t.Fatal(err)
	}
	dir, _ := e.tr.HostDirection()
	sf := dir.(*direction.ScheduleFree[float32])
	var flat []float32
	for v := range store.Scope("/model").IterVariables() {
		if v.Trainable {
			flat = append(flat, atX[v.Path()]...)
		}
	}
	if !slices.Equal(flat, sf.X()) {
		t.Fatal("BeginEval did not move the parameters to Schedule-Free's x")
	}
	if !equalVals(storeVals(t, store, trainable), y) || !equalVals(storeVals(t, store, runningStat), statsY) {
		t.Fatal("EndEval did not restore y and the training statistics")
	}
	if after, _ := g.eng.MarshalBinary(); !bytes.Equal(after, snap) {
		t.Fatal("the evaluation changed the engine's snapshot")
	}

	// The reference: a copy of the trainer, its parameters set by hand,
	// running training steps' forward passes (Grad) over the same batches.
	statsAt := func(params map[string][]float32) map[string][]float32 {
		c := newGoMLXPair(t, p, tr).eng.(*gomlxEngine)
		if err := c.UnmarshalBinary(snap); err != nil {
			t.Fatal(err)
		}
		setVals(t, c.tr.Store(), params)
		bs := p.Options.Batch
		for k := range min(RefreshBatches, tr.N()/bs) {
			b := c.imageBuf(bs, tr)
			if err := c.fill(b, tr, nil, k*bs, bs, nil); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.tr.Grad(b.x, b.y); err != nil {
				t.Fatal(err)
			}
		}
		if !equalVals(storeVals(t, c.tr.Store(), trainable), params) {
			t.Fatal("Grad moved the parameters")
		}
		return storeVals(t, c.tr.Store(), runningStat)
	}
	statsX, statsAtY := statsAt(atX), statsAt(y)
	if !equalVals(statsEval, statsX) {
		t.Fatal("the refreshed statistics differ from those computed at x")
	}
	if equalVals(statsEval, statsAtY) || equalVals(statsEval, statsY) {
		t.Fatal("the refreshed statistics equal those at y")
	}
	// The evaluation is an eval-mode pass at x with the statistics at x.
	c := newGoMLXPair(t, p, tr).eng.(*gomlxEngine)
	if err := c.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	setVals(t, c.tr.Store(), atX)
	setVals(t, c.tr.Store(), statsX)
	wl, wa, err := c.evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	l, a, err := g.eng.Evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	if wl != evalLoss || wa != evalAcc || l != evalLoss || a != evalAcc {
		t.Fatalf("evaluation %v %v (inside BeginEval %v %v); at x with the statistics at x %v %v", l, a, evalLoss, evalAcc, wl, wa)
	}
	setVals(t, c.tr.Store(), statsY)
	sl, _, _ := c.evaluate(test)
	t.Logf("test loss at x: %.6f with the refreshed statistics, %.6f with y's", wl, sl)
}

// TestPeerStepCost measures the cost of running a peer's direction on the
// host (salsagomlx.Host) against the fused QHM step (cosine, the same
// gradient graph with the update inside), as salsa bench does: batch 128
// of 28×28×1 images, interleaved rounds, the median ms per step. It splits
// the peer step into its gradient graph (Grad) and its host update (copy
// out, Compute, copy back). Set SALSA_PEER_BENCH=1 to run it.
func TestPeerStepCost(t *testing.T) {
	if os.Getenv("SALSA_PEER_BENCH") == "" {
		t.Skip("set SALSA_PEER_BENCH=1")
	}
	models := strings.Split(os.Getenv("SALSA_PEER_BENCH_MODELS"), ",")
	if models[0] == "" {
		models = []string{"mlp", "resnet20"}
	}
	const n, batch, rounds = 512, 128, 5
	for _, m := range models {
		sp := synthImages(n, 28, 28, 1, 1)
		sp.Labels = 10
		steps := 10
		if m == "resnet20" || m == "cnn" {
			steps = 3
		}
		if m == "mlp" {
			sp.H, sp.W, sp.C = 0, 0, 0
		}
		mk := func(method string) gomlxPair {
			p, err := NewPlan(Options{Dataset: "mnist", Model: m, Method: method, Preset: "paper", LR0: 0.01,
				Epochs: 1, Batch: batch, Seed: 1, Engine: "gomlx"}, n)
			if err != nil {
				t.Fatal(err)
			}
			return newGoMLXPair(t, p, sp)
		}
		pairs := map[string]gomlxPair{}
		for _, method := range []string{"cosine", "schedule-free-sgd", "prodigy"} {
			pairs[method] = mk(method)
		}
		r := rand.New(rand.NewPCG(1, 2))
		idx := make([]int, batch)
		times := map[string][]float64{}
		for round := 0; round <= rounds; round++ {
			for _, method := range []string{"cosine", "schedule-free-sgd", "prodigy"} {
				g := pairs[method]
				e := g.eng.(*gomlxEngine)
				var grad, upd time.Duration
				start := time.Now()
				for s := range steps {
					for i := range idx {
						idx[i] = r.IntN(n)
					}
					b := Batch{Idx: idx, Epoch: 1, Step: round*steps + s + 1}
					if method == "cosine" {
						if _, err := g.eng.Step(g.sched, b); err != nil {
							t.Fatal(err)
						}
						continue
					}
					// The peer's step, timed in its two phases.
					buf, err := e.batch(b)
					if err != nil {
						t.Fatal(err)
					}
					t0 := time.Now()
					if _, _, err := e.tr.Grad(buf.x, buf.y); err != nil {
						t.Fatal(err)
					}
					t1 := time.Now()
					if _, _, err := e.tr.Update(); err != nil {
						t.Fatal(err)
					}
					grad, upd = grad+t1.Sub(t0), upd+time.Since(t1)
				}
				if round > 0 {
					per := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(steps) }
					times[method] = append(times[method], per(time.Since(start)))
					if method != "cosine" {
						times[method+" grad"] = append(times[method+" grad"], per(grad))
						times[method+" host update"] = append(times[method+" host update"], per(upd))
					}
				}
			}
		}
		keys := slices.Sorted(maps.Keys(times))
		for _, k := range keys {
			v := slices.Sorted(slices.Values(times[k]))
			t.Logf("%s %-30s %8.3f ms/step (median of %d rounds of %d steps)", m, k, v[len(v)/2], len(v), steps)
		}
	}
}
