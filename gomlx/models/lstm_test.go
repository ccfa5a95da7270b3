package models

import (
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func TestLSTMConfigValidation(t *testing.T) {
	ok := LSTMConfig{Vocab: 10, Embed: 8, Hidden: 8, Layers: 2, Dropout: 0.5, Tied: true}
	if _, err := NewLSTM(ok); err != nil {
		t.Fatalf("NewLSTM(%+v): %v", ok, err)
	}
	for _, c := range []struct {
		mod  func(*LSTMConfig)
		want []string
	}{
		{func(c *LSTMConfig) { c.Vocab = 0 }, []string{"Vocab", "0", "[1, "}},
		{func(c *LSTMConfig) { c.Embed = -3 }, []string{"Embed", "-3", "[1, "}},
		{func(c *LSTMConfig) { c.Hidden = 0 }, []string{"Hidden", "0", "[1, "}},
		{func(c *LSTMConfig) { c.Hidden = 1 << 25 }, []string{"Hidden", "33554432"}},
		{func(c *LSTMConfig) { c.Layers = 0 }, []string{"Layers", "0", "[1, 64]"}},
		{func(c *LSTMConfig) { c.Dropout = 1 }, []string{"Dropout", "1", "[0, 1)"}},
		{func(c *LSTMConfig) { c.Dropout = -0.1 }, []string{"Dropout", "-0.1", "[0, 1)"}},
		{func(c *LSTMConfig) { c.Dropout = math.NaN() }, []string{"Dropout", "NaN"}},
		{func(c *LSTMConfig) { c.Embed = 4 }, []string{"Embed", "4", "Hidden = 8", "Tied"}},
	} {
		cfg := ok
		c.mod(&cfg)
		_, err := NewLSTM(cfg)
		if err == nil {
			t.Errorf("NewLSTM(%+v): no error", cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("NewLSTM(%+v) error %q: does not mention %q", cfg, err, w)
			}
		}
	}
	cfg := ok
	cfg.Embed, cfg.Tied = 4, false
	if _, err := NewLSTM(cfg); err != nil {
		t.Errorf("untied Embed != Hidden: %v", err)
	}
	if c := CharLSTM(65).Config(); c != (LSTMConfig{Vocab: 65, Embed: 256, Hidden: 256, Layers: 2, Dropout: 0.2, Tied: true}) {
		t.Errorf("CharLSTM(65) = %+v", c)
	}
	if c := PaperLSTM(33278).Config(); c != (LSTMConfig{Vocab: 33278, Embed: 1500, Hidden: 1500, Layers: 2, Dropout: 0.65, Tied: true}) {
		t.Errorf("PaperLSTM(33278) = %+v", c)
	}
}

// lstmTestForward runs Forward once under /model and returns the logits and
// the next state. training selects the mode; in eval mode the variables are
// bound as parameters first (the Go backend would embed them as constants).
func lstmTestForward(t testing.TB, backend compute.Backend, store *model.Store, m *LSTM, training bool,
	tokens, state *tensors.Tensor) (logits, next *tensors.Tensor) {
	t.Helper()
	out, err := model.CallOnceN(backend, store, func(s *model.Scope, tok, st *Node) []*Node {
		g := tok.Graph()
		store.SetTraining(g, true)
		for v := range store.Scope("/model").IterVariables() {
			v.NodeValue(g)
		}
		store.SetTraining(g, training)
		l, n := m.Forward(s.In("model"), tok, st)
		return []*Node{l, n}
	}, tokens, state)
	if err != nil {
		t.Fatal(err)
	}
	return out[0], out[1]
}

func lstmTokens(b, t, vocab int, seed uint32) *tensors.Tensor {
	flat := make([]int32, b*t)
	x := seed
	for i := range flat {
		x = x*1664525 + 1013904223
		flat[i] = int32((x >> 8) % uint32(vocab))
	}
	return tensors.FromFlatDataAndDimensions(flat, b, t)
}

func lstmFlat(tt *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](tt) }

func lstmNewStore(t testing.TB, seed int64) *model.Store {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(seed); err != nil {
		t.Fatal(err)
	}
	return store
}

func TestLSTMShapesAndParams(t *testing.T) {
	backend := gobackend.GetBackend()
	m := CharLSTM(65)
	// PyTorch: nn.Embedding(65, 256) 65·256 = 16640; nn.LSTM(256, 256, 2)
	// per layer 4·256·256 (W_ih) + 4·256·256 (W_hh) + 2·4·256 (b_ih, b_hh)
	// = 526336, two layers 1052672; the tied decoder adds its bias, 65.
	const want = 16640 + 2*526336 + 65 // 1069377
	if n := m.NumParams(); n != want {
		t.Errorf("NumParams = %d, want %d", n, want)
	}
	store := lstmNewStore(t, 1)
	const b, T = 3, 5
	logits, next := lstmTestForward(t, backend, store, m, true, lstmTokens(b, T, 65, 1),
		tensors.FromShape(m.StateShape(b)))
	if got := logits.Shape().Dimensions; len(got) != 3 || got[0] != b || got[1] != T || got[2] != 65 {
		t.Errorf("logits shape %s, want [%d %d 65]", logits.Shape(), b, T)
	}
	if !next.Shape().Equal(m.StateShape(b)) {
		t.Errorf("next shape %s, want %s", next.Shape(), m.StateShape(b))
	}
	if s := m.StateShape(b); s.DType != dtypes.Float32 || s.Rank() != 4 || s.Dim(0) != 2 || s.Dim(1) != 2 || s.Dim(2) != b || s.Dim(3) != 256 {
		t.Errorf("StateShape(%d) = %s", b, s)
	}
	n, vars := 0, 0
	for v := range store.Scope("/model").IterVariables() {
		if v.Trainable {
			n += v.Shape().Size()
			vars++
		}
	}
	if n != want || vars != 10 {
		t.Errorf("store holds %d trainable scalars in %d variables, want %d in 10", n, vars, want)
	}
	// Initial ranges: embedding U(−0.1, 0.1), LSTM U(−1/16, 1/16), decoder bias 0.
	for _, c := range []struct {
		path  string
		bound float64
	}{
		{"/model/embedding/weight", 0.1}, {"/model/lstm_l0/weight_ih", 1.0 / 16}, {"/model/lstm_l1/weight_hh", 1.0 / 16},
		{"/model/lstm_l1/bias_ih", 1.0 / 16}, {"/model/lstm_l0/bias_hh", 1.0 / 16}, {"/model/decoder/bias", 0},
	} {
		v := store.GetVariable(c.path)
		if v == nil {
			t.Errorf("no variable %s", c.path)
			continue
		}
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range lstmFlat(val) {
			lo, hi = min(lo, float64(x)), max(hi, float64(x))
		}
		if lo < -c.bound || hi > c.bound || (c.bound > 0 && (hi < 0.9*c.bound || lo > -0.9*c.bound)) {
			t.Errorf("%s in [%g, %g], want spread over [−%g, %g]", c.path, lo, hi, c.bound, c.bound)
		}
	}
}

// TestLSTMReference checks a one-layer untied model against PyTorch's LSTM
// cell equations in float64 with the same weights, over three steps from a
// non-zero state.
func TestLSTMReference(t *testing.T) {
	backend := gobackend.GetBackend()
	const V, E, H, B, T = 5, 3, 4, 2, 3
	m, err := NewLSTM(LSTMConfig{Vocab: V, Embed: E, Hidden: H, Layers: 1, Dropout: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	store := lstmNewStore(t, 7)
	tokens := lstmTokens(B, T, V, 3)
	state0 := make([]float32, 2*B*H)
	for i := range state0 {
		state0[i] = float32(math.Sin(float64(i)+0.5)) * 0.8
	}
	st := tensors.FromFlatDataAndDimensions(state0, 2, 1, B, H)
	lstmTestForward(t, backend, store, m, true, tokens, st) // creates the variables
	// Give the decoder bias a non-zero value.
	dbias := store.GetVariable("/model/decoder/bias")
	if err := dbias.SetValue(tensors.FromFlatDataAndDimensions([]float32{0.1, -0.2, 0.3, 0, 0.05}, V)); err != nil {
		t.Fatal(err)
	}
	logits, next := lstmTestForward(t, backend, store, m, false, tokens, st)

	get := func(p string) []float64 {
		val, err := store.GetVariable("/model/" + p).Value()
		if err != nil {
			t.Fatal(err)
		}
		f := lstmFlat(val)
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
	emb, wih, whh, bih, bhh := get("embedding/weight"), get("lstm_l0/weight_ih"), get("lstm_l0/weight_hh"), get("lstm_l0/bias_ih"), get("lstm_l0/bias_hh")
	dw, db := get("decoder/weight"), get("decoder/bias")
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	tok := tensors.MustCopyFlatData[int32](tokens)
	gotL, gotN := lstmFlat(logits), lstmFlat(next)
	const tol = 2e-6
	for j := range B {
		h, c := make([]float64, H), make([]float64, H)
		for u := range H {
			h[u], c[u] = float64(state0[j*H+u]), float64(state0[B*H+j*H+u])
		}
		for s := range T {
			x := emb[int(tok[j*T+s])*E:][:E]
			gate := make([]float64, 4*H)
			for r := range 4 * H {
				a := bih[r] + bhh[r]
				for e := range E {
					a += wih[r*E+e] * x[e]
				}
				for u := range H {
					a += whh[r*H+u] * h[u]
				}
				gate[r] = a
			}
			for u := range H {
				i, f, g, o := sigmoid(gate[u]), sigmoid(gate[H+u]), math.Tanh(gate[2*H+u]), sigmoid(gate[3*H+u])
				c[u] = f*c[u] + i*g
				h[u] = o * math.Tanh(c[u])
			}
			for v := range V {
				want := db[v]
				for u := range H {
					want += dw[v*H+u] * h[u]
				}
				if got := float64(gotL[(j*T+s)*V+v]); math.Abs(got-want) > tol {
					t.Errorf("logits[%d,%d,%d] = %.7f, want %.7f", j, s, v, got, want)
				}
			}
		}
		for u := range H {
			if got := float64(gotN[j*H+u]); math.Abs(got-h[u]) > tol {
				t.Errorf("next h[%d,%d] = %.7f, want %.7f", j, u, got, h[u])
			}
			if got := float64(gotN[B*H+j*H+u]); math.Abs(got-c[u]) > tol {
				t.Errorf("next c[%d,%d] = %.7f, want %.7f", j, u, got, c[u])
			}
		}
	}
}

func lstmSmall(t testing.TB) *LSTM {
	m, err := NewLSTM(LSTMConfig{Vocab: 7, Embed: 6, Hidden: 6, Layers: 2, Dropout: 0.3, Tied: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func lstmMaxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestLSTMStateCarry checks that two Forwards over the halves of a sequence,
// with the state carried, equal one Forward over all of it (eval mode).
func TestLSTMStateCarry(t *testing.T) {
	backend := gobackend.GetBackend()
	m := lstmSmall(t)
	store := lstmNewStore(t, 3)
	const B, T = 3, 8
	tokens := lstmTokens(B, T, 7, 5)
	tok := tensors.MustCopyFlatData[int32](tokens)
	half := func(from int) *tensors.Tensor {
		flat := make([]int32, 0, B*T/2)
		for j := range B {
			flat = append(flat, tok[j*T+from:j*T+from+T/2]...)
		}
		return tensors.FromFlatDataAndDimensions(flat, B, T/2)
	}
	zero := tensors.FromShape(m.StateShape(B))
	lstmTestForward(t, backend, store, m, true, tokens, zero)
	all, nAll := lstmTestForward(t, backend, store, m, false, tokens, zero)
	first, n1 := lstmTestForward(t, backend, store, m, false, half(0), zero)
	second, n2 := lstmTestForward(t, backend, store, m, false, half(T/2), n1)
	a, f, s := lstmFlat(all), lstmFlat(first), lstmFlat(second)
	const V = 7
	var joined []float32
	for j := range B {
		joined = append(joined, f[j*T/2*V:(j+1)*T/2*V]...)
		joined = append(joined, s[j*T/2*V:(j+1)*T/2*V]...)
	}
	if d := lstmMaxDiff(a, joined); d > 1e-6 {
		t.Errorf("logits differ by %g between one Forward and two with the state carried", d)
	}
	if d := lstmMaxDiff(lstmFlat(nAll), lstmFlat(n2)); d > 1e-6 {
		t.Errorf("final states differ by %g", d)
	}
	if d := lstmMaxDiff(lstmFlat(n1), lstmFlat(n2)); d == 0 {
		t.Errorf("the state did not change over the second half")
	}
}

// TestLSTMDropout checks that eval mode is deterministic and that training
// mode's masks follow the store's RNG state.
func TestLSTMDropout(t *testing.T) {
	backend := gobackend.GetBackend()
	m := lstmSmall(t)
	store := lstmNewStore(t, 11)
	const B, T = 4, 6
	tokens, zero := lstmTokens(B, T, 7, 9), tensors.FromShape(m.StateShape(B))
	lstmTestForward(t, backend, store, m, true, tokens, zero)

	e1, _ := lstmTestForward(t, backend, store, m, false, tokens, zero)
	e2, _ := lstmTestForward(t, backend, store, m, false, tokens, zero)
	if d := lstmMaxDiff(lstmFlat(e1), lstmFlat(e2)); d != 0 {
		t.Errorf("eval mode: two runs differ by %g", d)
	}
	train := func(seed int64) []float32 {
		if err := store.SetRNGStateFromSeed(seed); err != nil {
			t.Fatal(err)
		}
		l, _ := lstmTestForward(t, backend, store, m, true, tokens, zero)
		return lstmFlat(l)
	}
	a, b, a2 := train(1), train(2), train(1)
	if d := lstmMaxDiff(a, a2); d != 0 {
		t.Errorf("training mode, same RNG state: outputs differ by %g", d)
	}
	if d := lstmMaxDiff(a, b); d < 1e-4 {
		t.Errorf("training mode, different RNG states: outputs differ by only %g", d)
	}
	if d := lstmMaxDiff(a, lstmFlat(e1)); d < 1e-4 {
		t.Errorf("training and eval mode differ by only %g", d)
	}
	// A training run advances the RNG: two consecutive runs use different masks.
	if err := store.SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	l1, _ := lstmTestForward(t, backend, store, m, true, tokens, zero)
	l2, _ := lstmTestForward(t, backend, store, m, true, tokens, zero)
	if d := lstmMaxDiff(lstmFlat(l1), lstmFlat(l2)); d < 1e-4 {
		t.Errorf("consecutive training runs differ by only %g", d)
	}
}

// lstmStep builds a training step: mean cross-entropy of the next token,
// its gradient, and x ← x − lr·g for every trainable variable under /model.
// It returns the loss before the update, the next state and the gradients.
func lstmStep(m *LSTM, store *model.Store, lr float64, withGrads bool) func(s *model.Scope, tok, st, tgt *Node) []*Node {
	return func(s *model.Scope, tok, st, tgt *Node) []*Node {
		g := tok.Graph()
		store.SetTraining(g, true)
		logits, next := m.Forward(s.In("model"), tok, st)
		logp := LogSoftmax(logits)
		loss := Neg(ReduceAllMean(ReduceSum(Mul(OneHot(tgt, m.cfg.Vocab, logp.DType()), logp), -1)))
		var vs []*model.Variable
		var xs []*Node
		for v := range store.Scope("/model").IterVariables() {
			if v.Trainable && v.InUseByGraph(g) {
				vs = append(vs, v)
				xs = append(xs, v.NodeValue(g))
			}
		}
		grads := Gradient(loss, xs...)
		out := []*Node{loss, next}
		if withGrads {
			return append(out, grads...)
		}
		for i, v := range vs {
			v.SetNodeValue(Sub(xs[i], MulScalar(grads[i], lr)))
		}
		return out
	}
}

// TestLSTMGradient checks the custom gradients against GoMLX's plain
// autodiff of the same graph, with dropout active and a carried state.
func TestLSTMGradient(t *testing.T) {
	backend := gobackend.GetBackend()
	const B, T = 3, 5
	for _, tied := range []bool{true, false} {
		cfg := LSTMConfig{Vocab: 7, Embed: 6, Hidden: 6, Layers: 2, Dropout: 0.3, Tied: tied}
		fast, err := NewLSTM(cfg)
		if err != nil {
			t.Fatal(err)
		}
		plain := &LSTM{cfg: cfg, plainGrad: true}
		store := lstmNewStore(t, 5)
		tokens, targets := lstmTokens(B, T, 7, 1), lstmTokens(B, T, 7, 2)
		st := make([]float32, fast.StateShape(B).Size())
		for i := range st {
			st[i] = float32(math.Cos(float64(i))) * 0.5
		}
		state := tensors.FromFlatDataAndDimensions(st, fast.StateShape(B).Dimensions...)
		run := func(m *LSTM) []*tensors.Tensor {
			if err := store.SetRNGStateFromSeed(42); err != nil {
				t.Fatal(err)
			}
			out, err := model.CallOnceN(backend, store, lstmStep(m, store, 0, true), tokens, state, targets)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		run(fast) // initializes the variables
		a, b := run(fast), run(plain)
		if len(a) != len(b) || len(a) != 2+10+btoi(!tied) {
			t.Fatalf("tied=%v: %d and %d outputs", tied, len(a), len(b))
		}
		for i := range a {
			fa, fb := lstmFlat(a[i]), lstmFlat(b[i])
			scale := 0.0
			for _, x := range fb {
				scale = max(scale, math.Abs(float64(x)))
			}
			if d := lstmMaxDiff(fa, fb); d > 1e-5*max(scale, 1e-2) || scale == 0 {
				t.Errorf("tied=%v output %d: custom and plain gradients differ by %g (scale %g)", tied, i, d, scale)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLSTMTrains checks that a few SGD steps lower the loss on a fixed batch.
func TestLSTMTrains(t *testing.T) {
	backend := gobackend.GetBackend()
	m, err := NewLSTM(LSTMConfig{Vocab: 11, Embed: 16, Hidden: 16, Layers: 2, Dropout: 0.1, Tied: true})
	if err != nil {
		t.Fatal(err)
	}
	store := lstmNewStore(t, 2)
	const B, T = 4, 10
	tokens := lstmTokens(B, T, 11, 4)
	tok := tensors.MustCopyFlatData[int32](tokens)
	tgt := make([]int32, len(tok)) // the next token of a fixed sequence
	for i := range tok {
		tgt[i] = (tok[i] + 1) % 11
	}
	targets := tensors.FromFlatDataAndDimensions(tgt, B, T)
	exec, err := model.NewExec(backend, store, lstmStep(m, store, 1.0, false))
	if err != nil {
		t.Fatal(err)
	}
	zero := tensors.FromShape(m.StateShape(B))
	var losses []float64
	for range 20 {
		out, err := exec.Exec(tokens, zero, targets)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, float64(tensors.ToScalar[float32](out[0])))
	}
	// The first loss is near ln 11, the loss of a uniform prediction.
	if first, last := losses[0], losses[len(losses)-1]; !(last < first-0.12) || math.Abs(first-math.Log(11)) > 0.2 {
		t.Errorf("losses %.4f", losses)
	}
}

// BenchmarkCharLSTMStep times a training step of CharLSTM(65) at B = 32,
// T = 64: forward, gradient and SGD update in one exec.
func BenchmarkCharLSTMStep(b *testing.B) {
	for _, c := range []struct {
		name, config string
		plain        bool
	}{{"default", "", false}, {"num_executors=2", "num_executors=2", false}, {"plain_autodiff", "", true}} {
		b.Run(c.name, func(b *testing.B) {
			backend, err := gobackend.New(c.config)
			if err != nil {
				b.Fatal(err)
			}
			m := CharLSTM(65)
			m.plainGrad = c.plain
			store := lstmNewStore(b, 1)
			const B, T = 32, 64
			tokens, targets := lstmTokens(B, T, 65, 1), lstmTokens(B, T, 65, 2)
			exec, err := model.NewExec(backend, store, lstmStep(m, store, 0.1, false))
			if err != nil {
				b.Fatal(err)
			}
			state := tensors.FromShape(m.StateShape(B))
			for range 2 { // compile and warm up
				out, err := exec.Exec(tokens, state, targets)
				if err != nil {
					b.Fatal(err)
				}
				state = out[1]
			}
			cpu0 := lstmCPUTime()
			b.ResetTimer()
			for range b.N {
				out, err := exec.Exec(tokens, state, targets)
				if err != nil {
					b.Fatal(err)
				}
				out[0].FinalizeAll()
				state = out[1]
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
			// CPU time of the process, both cores: steadier than the wall
			// time on a shared machine.
			b.ReportMetric((lstmCPUTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/step")
		})
	}
}

// lstmCPUTime is the user plus system CPU time of the process so far.
func lstmCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
