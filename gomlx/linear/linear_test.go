package linear

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refLoss is a float64 reference of f(x) + 0.5·wd·‖x‖² and its gradient, for
// the layout of Softmax.X.
func refLoss(x []float64, in, out int, wd float64, X []float32, y []int32) (float64, []float64) {
	n := len(y)
	g := make([]float64, len(x))
	loss := 0.0
	for i := 0; i < n; i++ {
		z := make([]float64, out)
		m := math.Inf(-1)
		for j := range z {
			z[j] = x[out*in+j]
			for k := 0; k < in; k++ {
				z[j] += x[j*in+k] * float64(X[i*in+k])
			}
			m = math.Max(m, z[j])
		}
		s := 0.0
		for _, v := range z {
			s += math.Exp(v - m)
		}
		lse := m + math.Log(s)
		loss += lse - z[y[i]]
		for j := range z {
			d := math.Exp(z[j] - lse)
			if int32(j) == y[i] {
				d--
			}
			d /= float64(n)
			g[out*in+j] += d
			for k := 0; k < in; k++ {
				g[j*in+k] += d * float64(X[i*in+k])
			}
		}
	}
	l2 := 0.0
	for i, v := range x {
		l2 += v * v
		g[i] += wd * v
	}
	return loss/float64(n) + 0.5*wd*l2, g
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func batch(r *rand.Rand, n, in, out int) ([]float32, []int32) {
	X := make([]float32, n*in)
	for i := range X {
		X[i] = float32(r.NormFloat64())
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(out))
	}
	return X, y
}

// TestAgainstReference runs steps with trials and compares the loss, ⟨g,s⟩,
// the trial losses along s, ⟨x⁺,d⟩, ‖d‖² and x with a float64 reference,
// searching along g (s = g) and along d (s = d_k, SearchAlongD).
func TestAgainstReference(t *testing.T) {
	for _, alongD := range []bool{false, true} {
		testAgainstReference(t, alongD)
	}
}

func testAgainstReference(t *testing.T, alongD bool) {
	const in, out, n = 37, 4, 9 // 37: not a multiple of any SIMD width
	cfg := Config{In: in, Out: out, Beta: 0.9, Nu: 0.7, WeightDecay: 0.01, SearchAlongD: alongD}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, len(tr.X))
	h := make([]float64, len(tr.X))
	for i := range tr.X {
		tr.X[i] = float32(0.2 * r.NormFloat64())
		x[i] = float64(tr.X[i])
	}
	const lr = 0.3
	for step := 1; step <= 6; step++ {
		X, y := batch(r, n, in, out)
		loss, gg, err := tr.Grad(X, y)
		if err != nil {
			t.Fatal(err)
		}
		wantLoss, g := refLoss(x, in, out, cfg.WeightDecay, X, y)
		// s: g, or the d_k the update below will take.
		s := g
		if alongD {
			s = make([]float64, len(g))
			for i := range g {
				s[i] = (1-cfg.Nu)*g[i] + cfg.Nu*(cfg.Beta*h[i]+(1-cfg.Beta)*g[i])
			}
		}
		wantGS := 0.0
		for i, v := range g {
			wantGS += v * s[i]
		}
		if !near(loss, wantLoss, 1e-5) || !near(gg, wantGS, 1e-4) {
			t.Errorf("alongD=%v step %d: loss %v ⟨g,s⟩ %v, want %v %v", alongD, step, loss, gg, wantLoss, wantGS)
		}
		for _, eta := range []float64{2 * lr, lr} {
			f, err := tr.Trial(eta)
			if err != nil {
				t.Fatal(err)
			}
			xt := make([]float64, len(x))
			for i := range x {
				xt[i] = x[i] - eta*s[i]
			}
			want, _ := refLoss(xt, in, out, cfg.WeightDecay, X, y)
			if !near(f, want, 1e-5) {
				t.Errorf("alongD=%v step %d trial η=%v: %v, want %v", alongD, step, eta, f, want)
			}
		}
		x1d, d2, err := tr.Update(lr)
		if err != nil {
			t.Fatal(err)
		}
		var wx1d, wd2 float64
		for i := range x {
			h[i] = cfg.Beta*h[i] + (1-cfg.Beta)*g[i]
			d := (1-cfg.Nu)*g[i] + cfg.Nu*h[i]
			x[i] -= lr * d
			wx1d += x[i] * d
			wd2 += d * d
		}
		if !near(x1d, wx1d, 1e-4) || !near(d2, wd2, 1e-4) {
			t.Errorf("step %d: x1d %v d2 %v, want %v %v", step, x1d, d2, wx1d, wd2)
		}
		for i := range x {
			if !near(float64(tr.X[i]), x[i], 1e-5) {
				t.Fatalf("step %d: x[%d] = %v, want %v", step, i, tr.X[i], x[i])
			}
		}
		if step == 3 {
			tr.ResetMomentum()
			clear(h)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := New(Config{In: 0, Out: 3}); err == nil {
		t.Error("In = 0 accepted")
	}
	tr, _ := New(Config{In: 2, Out: 3})
	if _, _, err := tr.Grad([]float32{1, 2}, []int32{3}); err == nil {
		t.Error("label 3 of 3 classes accepted")
	}
	if _, err := tr.Trial(1); err == nil {
		t.Error("Trial before Grad accepted")
	}
	// A rate that rounds to 0 or +Inf in float32 is refused by every update,
	// which leaves the parameters and g unspent; before, 1e-46 was accepted
	// and moved nothing.
	x := []float32{1, 2, 3, 4}
	for _, lr := range []float64{1e-46, 1e39, 0, math.NaN()} {
		x0 := slices.Clone(tr.X)
		for name, f := range map[string]func() error{
			"Update": func() error { _, _, err := tr.Update(lr); return err },
			"Apply":  func() error { _, _, err := tr.Apply(make([]float32, len(tr.X)), lr); return err },
			"Plain":  func() error { return tr.Plain(lr) },
		} {
			if _, _, err := tr.Grad(x, []int32{0, 1}); err != nil {
				t.Fatal(err)
			}
			if err := f(); err == nil || !strings.Contains(err.Error(), "must be within float32's range") {
				t.Errorf("%s(%v): err = %v", name, lr, err)
			}
		}
		if !slices.Equal(tr.X, x0) {
			t.Errorf("lr %v: a refused update moved the parameters", lr)
		}
	}
}

// BenchmarkLogreg: MNIST-shaped softmax regression 784→10, batch 128.
func BenchmarkLogreg(b *testing.B) {
	tr, _ := New(Config{In: 784, Out: 10, Beta: 0.9, Nu: 0.7, WeightDecay: 1e-4})
	r := rand.New(rand.NewPCG(1, 1))
	var Xs [4][]float32
	var ys [4][]int32
	for i := range Xs {
		Xs[i], ys[i] = batch(r, 128, 784, 10)
	}
	b.Run("plain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, _, err := tr.Step(Xs[i%4], ys[i%4], 1e-3); err != nil {
				b.Fatal(err)
			}
		}
	})
	// the gradient alone at x = 0, and at a model all but certain of one
	// class: p_ij below float32's normal range, where δ_ij·x would be
	// subnormal (Grad takes such a δ as 0)
	for _, c := range []struct {
		name string
		at   func(*Softmax)
	}{{"grad", func(tr *Softmax) { clear(tr.X) }}, {"confident", confident}} {
		b.Run(c.name, func(b *testing.B) {
			c.at(tr)
			for i := 0; i < b.N; i++ {
				if _, _, err := tr.Grad(Xs[i%4], ys[i%4]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("ssls2", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			tr.Grad(Xs[i%4], ys[i%4])
			tr.Trial(2e-3)
			tr.Trial(1e-3)
			tr.Update(1e-3)
		}
	})
}

// confident makes tr's model all but certain of class 0: its bias is 95
// above the others', so p_ij for every other class is about e⁻⁹⁵ ≈ 5e-42,
// below float32's normal range (1.2e-38).
func confident(tr *Softmax) {
	clear(tr.X)
	tr.X[tr.cfg.Out*tr.cfg.In] = 95
}

// TestGradConfident: with p_ij below float32's normal range, Grad's
// gradient matches the float64 reference and holds no subnormal number,
// whose arithmetic is many times slower on x86 (BenchmarkLogreg/confident).
func TestGradConfident(t *testing.T) {
	const in, out, n = 37, 4, 9
	tr, err := New(Config{In: in, Out: out, WeightDecay: 0})
	if err != nil {
		t.Fatal(err)
	}
	confident(tr)
	X, y := batch(rand.New(rand.NewPCG(7, 8)), n, in, out)
	loss, _, err := tr.Grad(X, y)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, len(tr.X))
	for i, v := range tr.X {
		x[i] = float64(v)
	}
	wantLoss, g := refLoss(x, in, out, 0, X, y)
	if !near(loss, wantLoss, 1e-5) {
		t.Errorf("loss %v, want %v", loss, wantLoss)
	}
	for i, v := range tr.Gradient() {
		if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
			t.Errorf("g[%d] = %v: subnormal", i, v)
		}
		if !near(float64(v), g[i], 1e-5) {
			t.Errorf("g[%d] = %v, want %v", i, v, g[i])
		}
	}
	for i, d := range tr.delta[:n*out] {
		if d != 0 && math.Abs(float64(d)) < 0x1p-126 {
			t.Errorf("δ[%d] = %v: subnormal", i, d)
		}
	}
}
