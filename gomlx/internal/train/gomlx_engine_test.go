package train

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
)

// gomlxSynth makes n examples of dim features in 3 classes: Gaussian noise
// with the class's third of the features shifted by 1, and a quarter of the
// labels redrawn at random, so that the classes overlap (on separable data
// the line search grows α without bound).
func gomlxSynth(n, dim int, seed uint64) *Split {
	r := rand.New(rand.NewPCG(seed, 2))
	s := &Split{Dim: dim, Labels: 3, X: make([]float32, n*dim), Y: make([]int32, n)}
	for i := range n {
		c := r.IntN(3)
		s.Y[i] = int32(c)
		if r.IntN(4) == 0 {
			s.Y[i] = int32(r.IntN(3))
		}
		for j := range dim {
			s.X[i*dim+j] = float32(r.NormFloat64())
			if j%3 == c {
				s.X[i*dim+j]++
			}
		}
	}
	return s
}

func gomlxPlan(t testing.TB, model, method string, n int) *Plan {
	t.Helper()
	p, err := NewPlan(Options{Dataset: "mnist", Model: model, Method: method, Preset: "paper", LR0: 0.01,
		Epochs: 2, Batch: 32, Seed: 1, Engine: "gomlx"}, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gomlxPair is an engine and its scheduler (of any engine, despite its name).
type gomlxPair struct {
	eng   Engine
	sched schedule.Scheduler
}

func newGoMLXPair(t testing.TB, p *Plan, sp *Split) gomlxPair {
	t.Helper()
	return newPair(t, newGoMLXEngine, p, sp)
}

// newPair is an engine of the factory and its scheduler.
func newPair(t testing.TB, factory EngineFactory, p *Plan, sp *Split) gomlxPair {
	t.Helper()
	eng, err := factory(p, sp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.New(p.Scheduler, p.Schedule)
	if err != nil {
		t.Fatal(err)
	}
	return gomlxPair{eng, s}
}

// snapshot returns the pair's engine and scheduler snapshots.
func (g gomlxPair) snapshot(t *testing.T) ([]byte, []byte) {
	t.Helper()
	e, err := g.eng.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.sched.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

func sameStep(a, b StepOut) bool {
	bits := math.Float64bits
	return bits(a.Loss) == bits(b.Loss) && bits(a.X1D) == bits(b.X1D) && bits(a.D2) == bits(b.D2) &&
		bits(a.LR) == bits(b.LR) && bits(a.NextLR) == bits(b.NextLR) && a.Step == b.Step && a.Searched == b.Searched
}

// TestGoMLXEngineSALSA drives logreg with the real SALSA scheduler for 20
// epochs of 500 examples in batches of 32 (the last batch of each epoch has
// 20), checks that the loss falls, and that an engine and scheduler
// restored from snapshots taken mid-run continue bit for bit alike.
func TestGoMLXEngineSALSA(t *testing.T) {
	const n, dim, epochs = 500, 20, 20
	sp := gomlxSynth(n, dim, 1)
	p := gomlxPair{}
	plan := gomlxPlan(t, "logreg", "salsa", n)
	p = newGoMLXPair(t, plan, sp)
	if p.eng.Name() != "gomlx" {
		t.Errorf("Name() = %q", p.eng.Name())
	}
	l0, a0, err := p.eng.Evaluate(sp)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l0-math.Log(3)) > 1e-6 {
		t.Errorf("initial loss %v: logreg starts at zero, want log 3 = %v", l0, math.Log(3))
	}
	var q gomlxPair // the restored copy
	var epochLoss []float64
	searched, fused := 0, 0
	spe := plan.StepsPerEpoch
	for ep := 1; ep <= epochs; ep++ {
		perm := Perm(plan.Options.Seed, ep, n)
		sum := 0.0
		for pos := 0; pos < spe; pos++ {
			idx := perm[pos*32 : min(pos*32+32, n)]
			st, err := p.eng.Step(p.sched, Batch{Idx: idx})
			if err != nil {
				t.Fatalf("epoch %d step %d: %v", ep, pos, err)
			}
			if st.Searched {
				searched++
			} else {
				fused++
			}
			sum += st.Loss
			if q.eng != nil {
				qt, err := q.eng.Step(q.sched, Batch{Idx: idx})
				if err != nil {
					t.Fatal(err)
				}
				if !sameStep(st, qt) {
					t.Fatalf("epoch %d step %d: restored run %+v, original %+v", ep, pos, qt, st)
				}
			}
		}
		epochLoss = append(epochLoss, sum/float64(spe))
		if ep == 5 { // mid-SSLS: the restored run also goes through the switch
			es, ss := p.snapshot(t)
			q = newGoMLXPair(t, plan, sp)
			if err := q.eng.UnmarshalBinary(es); err != nil {
				t.Fatal(err)
			}
			if q.sched, err = schedule.Restore(ss); err != nil {
				t.Fatal(err)
			}
		}
	}
	pe, _ := p.snapshot(t)
	qe, _ := q.snapshot(t)
	if !bytes.Equal(pe, qe) {
		t.Error("the restored run ends with other parameters")
	}
	l1, a1, err := p.eng.Evaluate(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steps %d (searched %d, fused %d); epoch losses %.4f … %.4f; train loss %.4f→%.4f acc %.3f→%.3f",
		p.sched.Step(), searched, fused, epochLoss[0], epochLoss[len(epochLoss)-1], l0, l1, a0, a1)
	if p.sched.Step() != epochs*spe {
		t.Errorf("%d steps, want %d", p.sched.Step(), epochs*spe)
	}
	if !(epochLoss[len(epochLoss)-1] < 0.9*epochLoss[0]) || !(l1 < 0.8*l0) || !(a1 > 0.6) {
		t.Errorf("no progress: epoch losses %v; eval loss %v→%v acc %v", epochLoss, l0, l1, a1)
	}
}

// TestGoMLXMatchesNative runs the gomlx and native engines side by side on
// the same batches for SALSA (its SSLS phase: gradient, trials, update) and
// adam-warmup: both are float32, so every step agrees to rounding and the
// schedulers take the same decisions.
func TestGoMLXMatchesNative(t *testing.T) {
	if Engines["native"] == nil {
		t.Skip("no native engine registered")
	}
	const n, dim = 500, 20
	sp := gomlxSynth(n, dim, 4)
	for _, method := range []string{"salsa", "adam-warmup"} {
		plan := gomlxPlan(t, "logreg", method, n)
		g := newGoMLXPair(t, plan, sp)
		q := newGoMLXPair(t, plan, sp)
		var err error
		if q.eng, err = Engines["native"](plan, sp); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 40; k++ {
			pos := k % plan.StepsPerEpoch
			idx := Perm(1, 1+k/plan.StepsPerEpoch, n)[pos*32 : min(pos*32+32, n)]
			a, err1 := g.eng.Step(g.sched, Batch{Idx: idx})
			b, err2 := q.eng.Step(q.sched, Batch{Idx: idx})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.LR != b.LR || a.Searched != b.Searched || !gomlxNear(a.Loss, b.Loss, 1e-5) ||
				!gomlxNear(a.X1D, b.X1D, 1e-4) || !gomlxNear(a.D2, b.D2, 1e-4) {
				t.Fatalf("%s step %d: gomlx %+v, native %+v", method, k+1, a, b)
			}
		}
	}
}

func gomlxNear(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestGoMLXEngineMLP: the MLP engine trains with SASA+, its initial weights
// follow --seed, and Adam (adam-warmup) runs.
func TestGoMLXEngineMLP(t *testing.T) {
	const n, dim = 256, 20
	sp := gomlxSynth(n, dim, 2)
	first := func(seed uint64, method string, steps int) (StepOut, StepOut, Engine) {
		plan := gomlxPlan(t, "mlp", method, n)
		plan.Options.Seed = seed
		p := newGoMLXPair(t, plan, sp)
		var st0, st StepOut
		for k := 0; k < steps; k++ {
			idx := Perm(seed, 1+k/8, n)[(k%8)*32 : (k%8)*32+32]
			var err error
			if st, err = p.eng.Step(p.sched, Batch{Idx: idx}); err != nil {
				t.Fatalf("%s step %d: %v", method, k+1, err)
			}
			if k == 0 {
				st0 = st
			}
		}
		return st0, st, p.eng
	}
	a0, a, eng := first(1, "sasa+", 40)
	b0, _, _ := first(1, "sasa+", 1)
	c0, _, _ := first(2, "sasa+", 1)
	if !sameStep(a0, b0) {
		t.Errorf("seed 1 twice: first steps %+v and %+v", a0, b0)
	}
	if a0.Loss == c0.Loss {
		t.Errorf("seeds 1 and 2: same first loss %v", a0.Loss)
	}
	if !(a.Loss < a0.Loss) || math.IsNaN(a.Loss) {
		t.Errorf("mlp sasa+: loss %v after 40 steps, %v at the first", a.Loss, a0.Loss)
	}
	if l, acc, err := eng.Evaluate(sp); err != nil || !(acc > 0.5) {
		t.Errorf("mlp Evaluate: loss %v acc %v err %v", l, acc, err)
	}
	w0, w, _ := first(3, "adam-warmup", 16)
	if math.IsNaN(w.Loss) || !(w.Loss < w0.Loss) {
		t.Errorf("mlp adam-warmup: loss %v after 16 steps, %v at the first", w.Loss, w0.Loss)
	}
}

// TestGoMLXEngineErrors: bad splits and indices are errors, and a NaN loss is
// reported in StepOut.Loss.
func TestGoMLXEngineErrors(t *testing.T) {
	sp := gomlxSynth(64, 6, 3)
	plan := gomlxPlan(t, "logreg", "sasa+", 64)
	bad := *sp
	bad.Y = append([]int32{5}, sp.Y[1:]...)
	if _, err := newGoMLXEngine(plan, &bad); err == nil {
		t.Error("label 5 of 3 classes: no error")
	}
	p := newGoMLXPair(t, plan, sp)
	if _, err := p.eng.Step(p.sched, Batch{Idx: []int{0, 64}}); err == nil {
		t.Error("example 64 of 64: no error")
	}
	if _, _, err := p.eng.Evaluate(&Split{Dim: 5, Labels: 3, X: make([]float32, 5), Y: []int32{0}}); err == nil {
		t.Error("Evaluate with Dim 5 on a model of 6: no error")
	}
	nan := *sp
	nan.X = append([]float32(nil), sp.X...)
	nan.X[0] = float32(math.NaN())
	p = newGoMLXPair(t, plan, &nan)
	st, err := p.eng.Step(p.sched, Batch{Idx: []int{0, 1, 2}})
	if err == nil || !math.IsNaN(st.Loss) {
		t.Errorf("NaN feature: loss %v, err %v; want NaN and an error", st.Loss, err)
	}
}

// BenchmarkEngine times the gomlx engine's Step on MNIST-shaped random data
// (784 features, 10 classes, batch 128) under three schedulers: shb-hand
// (constant: the fused step), sasa+ (the fused step; its statistics are
// always computed) and ssls (gradient, trials, update).
func BenchmarkEngine(b *testing.B) {
	const n, dim = 4096, 784
	r := rand.New(rand.NewPCG(5, 5))
	sp := &Split{Dim: dim, Labels: 10, X: make([]float32, n*dim), Y: make([]int32, n)}
	for i := range sp.X {
		sp.X[i] = float32(r.Float64())
	}
	for i := range sp.Y {
		sp.Y[i] = int32(r.IntN(10))
	}
	for _, model := range []string{"logreg", "mlp"} {
		for _, method := range []string{"shb-hand", "sasa+", "ssls"} {
			b.Run(model+"/"+method, func(b *testing.B) {
				plan, err := NewPlan(Options{Dataset: "mnist", Model: model, Method: method, Preset: "paper",
					LR0: 0.01, Epochs: 100, Batch: 128, Seed: 1, Engine: "gomlx"}, n)
				if err != nil {
					b.Fatal(err)
				}
				p := newGoMLXPair(b, plan, sp)
				perm := Perm(1, 1, n)
				step := func(i int) {
					lo := (i % (n / 128)) * 128
					if _, err := p.eng.Step(p.sched, Batch{Idx: perm[lo : lo+128]}); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < 3; i++ { // compile
					step(i)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					step(i)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
			})
		}
	}
}

// keptCopies is the number of values of the parameters' copies, kept,
// candidate and earlier, that e holds.
func keptCopies(e Engine) int {
	switch e := e.(type) {
	case *nativeEngine:
		return len(e.saved) + len(e.cand) + len(e.earlier)
	case *gomlxEngine:
		n := 0
		for v := range e.tr.Store().IterVariables() {
			for _, sc := range []string{"/kept/", "/candidate/", "/earlier/"} {
				if strings.HasPrefix(v.Path(), salsagomlx.StateScope+sc) {
					n += v.Shape().Size()
				}
			}
		}
		return n
	}
	panic(fmt.Sprintf("keptCopies: engine %T", e))
}

// engineModel is an engine and a model it trains.
type engineModel struct{ engine, model string }

// forEngines runs f as the subtest ENGINE-MODEL for the native logreg and
// the GoMLX logreg and mlp, skipping an engine that is not registered.
func forEngines(t *testing.T, f func(t *testing.T, c engineModel)) {
	for _, c := range []engineModel{{"native", "logreg"}, {"gomlx", "logreg"}, {"gomlx", "mlp"}} {
		t.Run(c.engine+"-"+c.model, func(t *testing.T) {
			if Engines[c.engine] == nil {
				t.Skipf("no %s engine registered", c.engine)
			}
			f(t, c)
		})
	}
}

// TestCopiesScripted: each engine's side of the copies' protocol, driven by
// a scripted scheduler. A candidate copied at step 5 and confirmed at step
// 6 is what the rollback of step 8 puts back; one not confirmed leaves the
// copy confirmed at step 3 (the candidate of step 2) in place. With
// KeepEarlier on the second Confirm the copy of step 2 stays as the
// earlier one, and a RollbackEarlier puts it back (the snapshot after step
// 5 then carries it). A snapshot taken after step 5, the candidate pending,
// resumes to the same rollback, and the release frees every copy.
func TestCopiesScripted(t *testing.T) {
	const n, dim = 320, 20
	sp := gomlxSynth(n, dim, 3)
	save, confirm := schedule.Result{Save: true}, schedule.Result{Confirm: true}
	back := schedule.Result{Rollback: true, Release: true}
	keepEarlier := schedule.Result{Confirm: true, KeepEarlier: true}
	backEarlier := schedule.Result{Rollback: true, RollbackEarlier: true, Release: true}
	forEngines(t, func(t *testing.T, c engineModel) {
		for _, sc := range []struct {
			name  string
			flags map[int]schedule.Result
			to    int // the step whose parameters the rollback puts back
		}{
			{"confirmed", map[int]schedule.Result{2: save, 3: confirm, 5: save, 6: confirm, 8: back}, 5},
			{"not confirmed", map[int]schedule.Result{2: save, 3: confirm, 5: save, 8: back}, 2},
			{"earlier", map[int]schedule.Result{2: save, 3: confirm, 4: save, 5: keepEarlier, 8: backEarlier}, 2},
			{"earlier kept, the kept put back", map[int]schedule.Result{2: save, 3: confirm, 4: save, 5: keepEarlier, 8: back}, 4},
		} {
			t.Run(sc.name, func(t *testing.T) {
				p, err := NewPlan(Options{Dataset: "mnist", Model: c.model, Method: "shb-hand", Preset: "paper", LR0: 0.2,
					Epochs: 3, Batch: 32, Seed: 1, Engine: c.engine}, n)
				if err != nil {
					t.Fatal(err)
				}
				pair := func() gomlxPair {
					g := newPair(t, Engines[c.engine], p, sp)
					g.sched = &schedtest.Script{Scheduler: g.sched, Flags: sc.flags}
					return g
				}
				a, b := pair(), gomlxPair{}
				losses := map[int]float64{} // the model's loss after each step
				for k := 1; k <= 8; k++ {
					idx := Perm(1, 1, n)[(k-1)*32 : k*32]
					for _, g := range []gomlxPair{a, b} {
						if g.eng == nil {
							continue
						}
						st, err := g.eng.Step(g.sched, Batch{Idx: idx})
						if err != nil {
							t.Fatalf("step %d: %v", k, err)
						}
						loss, _, err := g.eng.Evaluate(sp)
						if err != nil {
							t.Fatal(err)
						}
						if g == b && loss != losses[k] {
							t.Fatalf("step %d: restored after step 5, the model's loss is %v, want %v", k, loss, losses[k])
						}
						losses[k] = loss
						if st.Rollback && loss != losses[sc.to] {
							t.Fatalf("step %d: rolled back to loss %v, want %v (step %d's)", k, loss, losses[sc.to], sc.to)
						}
					}
					if k == 5 {
						b = pair()
						es, ss := a.snapshot(t)
						if err := b.eng.UnmarshalBinary(es); err != nil {
							t.Fatal(err)
						}
						in, err := schedule.Restore(ss)
						if err != nil {
							t.Fatal(err)
						}
						b.sched = &schedtest.Script{Scheduler: in, Flags: sc.flags}
					}
				}
				if losses[8] == losses[7] {
					t.Fatalf("the rollback of step 8 left the loss at %v: the test covers nothing", losses[8])
				}
				for _, g := range []gomlxPair{a, b} {
					if m := keptCopies(g.eng); m != 0 {
						t.Errorf("after the release the engine holds %d values of copies", m)
					}
				}
			})
		}
	})
}

// TestRollbackPutsBackKept: salsa-budget's probe with probe_rollback=1 on
// each engine. After the rollback the model evaluates exactly as it did
// right after the last Save that was confirmed, and a copy restored from a
// snapshot taken between the two rolls back to the same parameters: the
// copies are in the snapshot (the copy is restored anew right after every
// Save, its candidate pending). The rollback releases the copies: the
// engine holds none after it.
func TestRollbackPutsBackKept(t *testing.T) {
	const n, dim = 320, 20
	sp := gomlxSynth(n, dim, 3)
	forEngines(t, func(t *testing.T, c engineModel) {
		p, err := NewPlan(Options{Dataset: "mnist", Model: c.model, Method: "salsa-budget", Preset: "paper", LR0: 0.01,
			Epochs: 12, Batch: 32, Seed: 1, Engine: c.engine,
			Sets: [][2]string{{"probe", "1"}, {"probe_early", "1"}, {"probe_rollback", "1"}}}, n)
		if err != nil {
			t.Fatal(err)
		}
		pair := func() gomlxPair { return newPair(t, Engines[c.engine], p, sp) }
		a := pair()
		var b gomlxPair // restored from a snapshot right after the last Save
		kept, cand, saves := math.NaN(), math.NaN(), 0
		for k := 0; k < 12*p.StepsPerEpoch; k++ {
			pos := k % p.StepsPerEpoch
			idx := Perm(1, 1+k/p.StepsPerEpoch, n)[pos*32 : min(pos*32+32, n)]
			st, err := a.eng.Step(a.sched, Batch{Idx: idx})
			if err != nil {
				t.Fatalf("step %d: %v", k+1, err)
			}
			if b.eng != nil {
				if _, err := b.eng.Step(b.sched, Batch{Idx: idx}); err != nil {
					t.Fatalf("restored, step %d: %v", k+1, err)
				}
			}
			if st.Confirm {
				kept = cand
			}
			switch {
			case st.Save:
				saves++
				if cand, _, err = a.eng.Evaluate(sp); err != nil {
					t.Fatal(err)
				}
			case st.Rollback:
				got, _, err := a.eng.Evaluate(sp)
				if err != nil {
					t.Fatal(err)
				}
				if got != kept || saves == 0 {
					t.Fatalf("step %d: rolled back to a model of loss %v, the last kept one's was %v (%d saves)", st.Step, got, kept, saves)
				}
				if b.eng == nil {
					t.Fatalf("step %d: the rollback came before a snapshot was taken", st.Step)
				}
				if gb, _, err := b.eng.Evaluate(sp); err != nil || gb != got {
					t.Fatalf("step %d: the restored copy rolled back to loss %v (%v), the original to %v", st.Step, gb, err, got)
				}
				// the rollback ends the probe: the copy is released
				if !st.Release {
					t.Fatalf("step %d: a rollback without a release", st.Step)
				}
				if n := keptCopies(a.eng); n != 0 {
					t.Fatalf("step %d: the engine still holds %d kept values after the release", st.Step, n)
				}
				t.Logf("rollback at step %d after %d saves, to loss %.4f", st.Step, saves, got)
				return
			}
			if st.Save {
				b = pair()
				es, ss := a.snapshot(t)
				if err := b.eng.UnmarshalBinary(es); err != nil {
					t.Fatal(err)
				}
				if b.sched, err = schedule.Restore(ss); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Fatalf("no rollback in %d steps (%d saves): the test covers nothing", a.sched.Step(), saves)
	})
}

// normAsker wraps a scheduler as a schedule.NormAsker and keeps the
// ‖x_{k+1}‖² each step reported.
type normAsker struct {
	schedule.Scheduler
	x2 []float64
}

func (n *normAsker) AsksNorm() bool { return true }

func (n *normAsker) End(obs schedule.Observation) (schedule.Result, error) {
	n.x2 = append(n.x2, obs.X2)
	return n.Scheduler.End(obs)
}

// TestEnginesReportNorm: every engine reports ‖x_{k+1}‖² to a scheduler
// that asks for it, and the values obey the update's identity
// ‖x_{k+1}‖² − ‖x_k‖² = −2α_k⟨x_{k+1}, d_k⟩ − α_k²‖d_k‖², with the ⟨x_{k+1}, d_k⟩
// and ‖d_k‖² the engine reports (the logreg starts at zero).
func TestEnginesReportNorm(t *testing.T) {
	const n, dim = 320, 20
	sp := gomlxSynth(n, dim, 3)
	forEngines(t, func(t *testing.T, c engineModel) {
		p, err := NewPlan(Options{Dataset: "mnist", Model: c.model, Method: "shb-hand", Preset: "paper", LR0: 0.2,
			Epochs: 3, Batch: 32, Seed: 1, Engine: c.engine}, n)
		if err != nil {
			t.Fatal(err)
		}
		g := newPair(t, Engines[c.engine], p, sp)
		s := &normAsker{Scheduler: g.sched}
		prev := math.NaN()
		for k := 1; k <= 8; k++ {
			st, err := g.eng.Step(s, Batch{Idx: Perm(1, 1, n)[(k-1)*32 : k*32]})
			if err != nil {
				t.Fatalf("step %d: %v", k, err)
			}
			x2 := s.x2[k-1]
			if c.model == "logreg" && k == 1 {
				prev = 0
			}
			if k > 1 || c.model == "logreg" {
				a := st.Result.LR
				want := prev - 2*a*st.X1D - a*a*st.D2
				if !(x2 > 0) || math.Abs(x2-want) > 1e-4*x2 {
					t.Errorf("step %d: ‖x‖² = %v, want %v − 2α⟨x, d⟩ − α²‖d‖² = %v", k, x2, prev, want)
				}
			}
			prev = x2
		}
	})
}
