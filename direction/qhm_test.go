package direction

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// quad is f(x) = ½xᵀAx − bᵀx with a seeded noise term σξ_k added to the
// gradient at step k, so that two runs see the same stochastic gradients.
type quad struct {
	a     [][]float64
	b     []float64
	noise [][]float64
}

func newQuad(n, steps int, sigma float64) *quad {
	r := rand.New(rand.NewPCG(42, 7))
	q := &quad{a: make([][]float64, n), b: make([]float64, n), noise: make([][]float64, steps)}
	for i := range q.a {
		q.a[i] = make([]float64, n)
		q.a[i][i] = 0.5 + 2.5*float64(i)/float64(n-1) // eigenvalues ≈ [0.3, 3.2]
		if i > 0 {
			q.a[i][i-1], q.a[i-1][i] = 0.2, 0.2
		}
		q.b[i] = r.NormFloat64()
	}
	for k := range q.noise {
		q.noise[k] = make([]float64, n)
		for i := range q.noise[k] {
			q.noise[k][i] = sigma * r.NormFloat64()
		}
	}
	return q
}

// grad returns ∇f(x) + σξ_k in T.
func grad[T Float](q *quad, x []T, k int) []T {
	g := make([]T, len(x))
	for i := range g {
		s := -q.b[i] + q.noise[k][i]
		for j, aij := range q.a[i] {
			s += aij * float64(x[j])
		}
		g[i] = T(s)
	}
	return g
}

// TestQHMSGD: ν = 0 (any β) and β = 0 (any ν) give d = g bitwise, with no
// momentum buffer (eq. (3)).
func TestQHMSGD(t *testing.T) {
	for _, cfg := range []QHMConfig{
		{Beta: 0.9, Nu: 0}, {Beta: 0.5, Nu: 0, WeightDecay: 1e-3},
		{Beta: 0, Nu: 1}, {Beta: 0, Nu: 0.7, WeightDecay: 1e-3},
	} {
		q, err := NewQHM[float32](cfg, 8)
		if err != nil {
			t.Fatal(err)
		}
		if q.Momentum() != nil {
			t.Errorf("%+v: Momentum() = %v, want nil", cfg, q.Momentum())
		}
		for k := range 3 {
			d, g := step(t, Direction[float32](q), uint64(k))
			if !sameBits(d, g) {
				t.Errorf("%+v step %d: d = %v, want g = %v", cfg, k, d, g)
			}
		}
	}
}

// TestQHMHeavyBall: ν = 1 is the dampened heavy ball of eq. (4),
// d_k = (1−β) g_k + β d_{k−1}, written literally; trajectories agree bitwise.
func TestQHMHeavyBall(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testHeavyBall[float32](t) })
	t.Run("float64", func(t *testing.T) { testHeavyBall[float64](t) })
}

func testHeavyBall[T Float](t *testing.T) {
	const n, steps, lr, wd = 6, 200, 0.3, 1e-2
	beta := 0.9 // a variable: 1−beta must round as at run time, not as an exact constant
	p := newQuad(n, steps, 0.1)
	q, err := NewQHM[T](QHMConfig{Beta: beta, Nu: 1, WeightDecay: wd}, n)
	if err != nil {
		t.Fatal(err)
	}
	x, xs := make([]T, n), make([]T, n)
	d, ds := make([]T, n), make([]T, n)
	for k := range steps {
		if err := q.Compute(d, grad(p, x, k), x); err != nil {
			t.Fatal(err)
		}
		Update(x, d, lr)

		g := grad(p, xs, k)
		for i := range ds {
			gi := g[i] + T(T(wd)*xs[i])
			ds[i] = T(T(1-beta)*gi) + T(T(beta)*ds[i])
			xs[i] -= T(T(lr) * ds[i])
		}
		if !sameBits(d, ds) || !sameBits(x, xs) {
			t.Fatalf("step %d: QHM(ν=1) d = %v, SHB d = %v", k, d, ds)
		}
	}
}

// TestQHMNesterov runs NAG (eq. (5)) literally, with the gradient at
// the look-ahead point y_k = x_k − αβ d_{k−1}, and QHM with ν = β and
// α_QHM = α_NAG/(1−β) on the same noisy quadratic. Per the derivation on
// [QHM], the QHM iterate equals y_k and NAG's x_k = y_k + α_QHM β h_{k−1}.
func TestQHMNesterov(t *testing.T) {
	const n, steps, lrNAG = 8, 400, 0.05
	beta := 0.9
	lrQHM := lrNAG / (1 - beta)
	p := newQuad(n, steps, 0.3)
	q, err := NewQHM[float64](QHMConfig{Beta: beta, Nu: beta}, n)
	if err != nil {
		t.Fatal(err)
	}
	x, dPrev := make([]float64, n), make([]float64, n) // NAG
	xq, d := make([]float64, n), make([]float64, n)    // QHM
	hPrev := make([]float64, n)
	worst := 0.0
	for k := range steps {
		y := make([]float64, n)
		for i := range y {
			y[i] = x[i] - lrNAG*beta*dPrev[i]
		}
		// x_k = y_k + α_QHM β h_{k−1}, with QHM's y_k = xq_k.
		xFromQ := make([]float64, n)
		for i := range xFromQ {
			xFromQ[i] = xq[i] + lrQHM*beta*hPrev[i]
		}
		worst = max(worst, relDiff(xq, y), relDiff(xFromQ, x))

		g := grad(p, y, k)
		for i := range dPrev {
			dPrev[i] = g[i] + beta*dPrev[i]
			x[i] -= lrNAG * dPrev[i]
		}
		if err := q.Compute(d, grad(p, xq, k), xq); err != nil {
			t.Fatal(err)
		}
		copy(hPrev, q.Momentum())
		Update(xq, d, lrQHM)
	}
	if worst > 1e-12 {
		t.Errorf("max relative difference QHM vs NAG over %d steps = %.3g, want ≤ 1e-12", steps, worst)
	}
	if math.Abs(x[0])+math.Abs(x[n-1]) < 0.1 {
		t.Fatalf("iterate did not move: %v", x) // the comparison above would be vacuous
	}
	t.Logf("max relative difference over %d steps: %.3g", steps, worst)
}

// relDiff returns ‖a − b‖∞ / max(‖b‖∞, 1e-300).
func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num = max(num, math.Abs(a[i]-b[i]))
		den = max(den, math.Abs(b[i]))
	}
	return num / max(den, 1e-300)
}

// TestQHMStatoptOrder checks three steps of statopt 0.2's qhm.py on a hand
// example (x_0 = [1, −2, 0.5], gradients below, wd = 0.01, lr = 0.1,
// x ← x − lr·d after each step). Expected values: CPython 3.11 float64
// replay of qhm.py's operations in order (g.add_(wd, x); h.mul_(β).add_(1−β, g);
// d.mul_(1−ν).add_(ν, h); x.add_(−lr, d)), printed with repr; the float32
// values are the same replay with numpy 1.24.2 float32 scalars (each Python
// constant cast to float32 first, as torch does), printed with float.hex.
func TestQHMStatoptOrder(t *testing.T) {
	grads := [][]float64{{0.3, -0.1, 0.25}, {-0.2, 0.4, 0.05}, {0.7, 0.0, -0.3}}
	type want struct{ g, d, x []float64 }
	cases := []struct {
		cfg   QHMConfig
		steps []want
	}{
		{QHMConfig{Beta: 0.9, Nu: 0.7, WeightDecay: 0.01}, []want{
			{[]float64{0.31, -0.12000000000000001, 0.255}, []float64{0.11470000000000001, -0.04440000000000001, 0.09435}, []float64{0.98853, -1.99556, 0.490565}},
			{[]float64{-0.19011470000000003, 0.3800444, 0.05490565}, []float64{-0.050812439000000015, 0.133056428, 0.0363800905}, []float64{0.9936112439, -2.0088656428, 0.48692699094999997}},
			{[]float64{0.709936112439, -0.020088656428, -0.2951307300905}, []float64{0.26827613550243, 0.009705994321639995, -0.09128081418348502}, []float64{0.966783630349757, -2.009836242232164, 0.49605507236834845}},
		}},
		{QHMConfig{Beta: 0.9, Nu: 1, WeightDecay: 0.01}, []want{
			{[]float64{0.31, -0.12000000000000001, 0.255}, []float64{0.030999999999999993, -0.011999999999999999, 0.025499999999999995}, []float64{0.9969, -1.9988, 0.49745}},
			{[]float64{-0.190031, 0.380012, 0.0549745}, []float64{0.0088969, 0.027201199999999995, 0.028447449999999992}, []float64{0.99601031, -2.00152012, 0.494605255}},
			{[]float64{0.7099601030999999, -0.0200152012, -0.29505394744999996}, []float64{0.07900322030999997, 0.022479559879999996, -0.0039026897449999966}, []float64{0.988109987969, -2.003768075988, 0.49499552397450003}},
		}},
	}
	for _, c := range cases {
		q, err := NewQHM[float64](c.cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		x, d := []float64{1, -2, 0.5}, make([]float64, 3)
		for k, w := range c.steps {
			g := slices.Clone(grads[k])
			if err := q.Compute(d, g, x); err != nil {
				t.Fatal(err)
			}
			Update(x, d, 0.1)
			if !slices.Equal(g, w.g) || !slices.Equal(d, w.d) || !slices.Equal(x, w.x) {
				t.Errorf("%+v step %d:\n g = %v want %v\n d = %v want %v\n x = %v want %v", c.cfg, k+1, g, w.g, d, w.d, x, w.x)
			}
		}
	}

	want32 := [][2][]float32{
		{{0x1.d5cfacp-4, -0x1.6bb98ep-5, 0x1.827524p-4}, {0x1.fa209ap-1, -0x1.fedd06p+0, 0x1.f656acp-2}},
		{{-0x1.a0416cp-5, 0x1.107fe4p-3, 0x1.2a0694p-5}, {0x1.fcba9cp-1, -0x1.012282p+1, 0x1.f29cfep-2}},
		{{0x1.12b6fap-2, 0x1.3e0bcp-7, -0x1.75e2ep-4}, {0x1.eefe42p-1, -0x1.01425p+1, 0x1.fbf5dep-2}},
	}
	q, _ := NewQHM[float32](cases[0].cfg, 3)
	x, d := []float32{1, -2, 0.5}, make([]float32, 3)
	for k, w := range want32 {
		g := []float32{float32(grads[k][0]), float32(grads[k][1]), float32(grads[k][2])}
		if err := q.Compute(d, g, x); err != nil {
			t.Fatal(err)
		}
		Update(x, d, 0.1)
		if !slices.Equal(d, w[0]) || !slices.Equal(x, w[1]) {
			t.Errorf("float32 step %d: d = %v want %v, x = %v want %v", k+1, d, w[0], x, w[1])
		}
	}
}

// TestAdamReference compares three Adam steps with a CPython 3.11 float64
// evaluation of torch.optim.Adam's formula with lr factored out,
// d = (m/(1−β1^t)) / (sqrt(v)/sqrt(1−β2^t) + ε), defaults β1 = 0.9,
// β2 = 0.999, ε = 1e-8. Python's ** and Go's math.Pow may differ in the last
// place, hence the 1e-15 tolerance.
func TestAdamReference(t *testing.T) {
	grads := [][]float64{{0.3, -0.1, 0.25}, {-0.2, 0.4, 0.05}, {0.7, 0.0, -0.3}}
	want := [][]float64{
		{0.9999999666666678, -0.9999999000000099, 0.9999999600000016}, // = g/(|g|+ε) at t = 1
		{0.144520524047364, 0.5595034748512939, 0.8030409338759903},
		{0.61912718130518, 0.43249780433776847, -0.08522091547841912},
	}
	a, err := NewAdam[float64](DefaultAdam(), 3)
	if err != nil {
		t.Fatal(err)
	}
	x, d := []float64{1, -2, 0.5}, make([]float64, 3)
	for k, g := range grads {
		if err := a.Compute(d, slices.Clone(g), x); err != nil {
			t.Fatal(err)
		}
		if r := relDiff(d, want[k]); r > 1e-15 {
			t.Errorf("step %d: d = %v, want %v (rel %.3g)", k+1, d, want[k], r)
		}
	}
	if a.Steps() != 3 {
		t.Errorf("Steps() = %d, want 3", a.Steps())
	}
}

// ExampleQHM minimizes f(x) = ½‖x − c‖² (gradient x − c) with QHM, β = 0.9,
// ν = 0.7, as a training loop x ← x − α·d.
func ExampleQHM() {
	c := []float64{1, -2}
	x := []float64{0, 0}
	q, err := NewQHM[float64](QHMConfig{Beta: 0.9, Nu: 0.7}, len(x))
	if err != nil {
		panic(err)
	}
	g, d := make([]float64, len(x)), make([]float64, len(x))
	for range 200 {
		for i := range g {
			g[i] = x[i] - c[i]
		}
		if err := q.Compute(d, g, x); err != nil {
			panic(err)
		}
		Update(x, d, 0.5)
	}
	fmt.Printf("x = [%.6f %.6f]\n", x[0], x[1])
	// Output: x = [1.000000 -2.000000]
}
