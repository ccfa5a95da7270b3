// Package linear is a fast path for softmax regression (multinomial logistic
// regression) on flat float32 parameter vectors, with the QHM direction and
// what the schedule protocol needs, without a computation graph.
//
// The parameters x are one flat vector: the weights W as Out rows of In (one
// row per class, so that both the forward pass and the gradient are dot
// products and axpys on contiguous rows), then the Out biases.
//
// The line-search trials are almost free: the logits are linear in x, so
// z(x − η·s) = z(x) − η·u with u = X·S_Wᵀ + s_b computed once per step, and
// ‖x − η·s‖² = ‖x‖² − 2η⟨x,s⟩ + η²‖s‖², where s is g (or d_k).
package linear

import (
	"fmt"
	"math"
)

// Config configures a [Softmax].
type Config struct {
	In, Out     int     // features and classes; In ≥ 1, Out ≥ 2
	Beta        float64 // QHM momentum β, in [0, 1)
	Nu          float64 // QHM ν, in [0, 1]
	WeightDecay float64 // wd ≥ 0

	// SearchAlongD makes the trials evaluate f(x − η·d) with the direction
	// d_k the update will take, and Grad return ⟨g,d⟩ instead of ‖g‖²
	// (schedule.AlongD).
	SearchAlongD bool
}

// Softmax is a softmax-regression classifier with its own training step
// (gradient, line-search trials, QHM update): it holds the parameters, the
// momentum and the scratch of one batch.
type Softmax struct {
	cfg Config
	X   []float32 // parameters: W (Out×In, row-major), then b (Out)
	h   []float32 // QHM momentum
	g   []float32 // g_k of the last Grad: ∇f + wd·x
	d   []float32 // d_k when it is neither g nor h (0 < ν < 1)
	s   []float32 // the search direction: g, or sd with SearchAlongD
	sd  []float32 // d_k computed ahead of the update, with SearchAlongD

	// Kept from the last Grad for the trials.
	batch []float32 // the inputs, n×In
	y     []int32
	z     []float32 // logits at x, n×Out
	u     []float32 // X·G_Wᵀ + g_b, n×Out, computed at the first trial
	uOK   bool
	xx    float64 // ‖x‖²
	xs    float64 // ⟨x, s⟩
	ss    float64 // ‖s‖²
	p     []float32
	delta []float32
}

// New returns a Softmax with x = 0.
func New(cfg Config) (*Softmax, error) {
	switch {
	case cfg.In < 1:
		return nil, fmt.Errorf("linear: In = %d: must be >= 1", cfg.In)
	case cfg.Out < 2:
		return nil, fmt.Errorf("linear: Out = %d: must be >= 2", cfg.Out)
	case !(cfg.Beta >= 0 && cfg.Beta < 1):
		return nil, fmt.Errorf("linear: Beta = %v: must be in [0, 1)", cfg.Beta)
	case !(cfg.Nu >= 0 && cfg.Nu <= 1):
		return nil, fmt.Errorf("linear: Nu = %v: must be in [0, 1]", cfg.Nu)
	case !(cfg.WeightDecay >= 0) || math.IsInf(cfg.WeightDecay, 0):
		return nil, fmt.Errorf("linear: WeightDecay = %v: must be finite and >= 0", cfg.WeightDecay)
	}
	n := cfg.Out*cfg.In + cfg.Out
	return &Softmax{cfg: cfg, X: make([]float32, n), h: make([]float32, n), g: make([]float32, n)}, nil
}

// ResetMomentum zeroes h, as after a learning-rate drop.
func (t *Softmax) ResetMomentum() { clear(t.h) }

// deltaFloor is 2⁻¹⁰⁰: [Softmax.Grad] takes a δ_ij smaller in magnitude as 0.
const deltaFloor = 0x1p-100

// Grad computes the mean cross-entropy plus 0.5·wd·‖x‖² on the batch
// (inputs n×In row-major, labels in [0, Out)) and g = ∇f + wd·x, which it
// keeps for [Softmax.Trial] and [Softmax.Update]; it returns the loss and
// ⟨g,s⟩ with s the search direction: ‖g‖², or ⟨g,d_k⟩ with SearchAlongD.
// The batch must not change until the next Grad.
func (t *Softmax) Grad(inputs []float32, labels []int32) (loss, gg float64, err error) {
	in, out := t.cfg.In, t.cfg.Out
	n := len(labels)
	if n == 0 || len(inputs) != n*in {
		return 0, 0, fmt.Errorf("linear: len(inputs) = %d: must be len(labels)·In = %d·%d > 0", len(inputs), n, in)
	}
	for i, c := range labels {
		if c < 0 || int(c) >= out {
			return 0, 0, fmt.Errorf("linear: labels[%d] = %d: must be in [0, %d)", i, c, out)
		}
	}
	t.batch, t.y, t.uOK = inputs, labels, false
	t.z = grow(t.z, n*out)
	t.p = grow(t.p, out)
	W, b := t.X[:out*in], t.X[out*in:]
	gW, gb := t.g[:out*in], t.g[out*in:]
	clear(t.g)
	logits(t.z, inputs, W, b, in, out)
	// δ_ij = (p_ij − [j = y_i])/n overwrites the logits' scratch copy.
	t.delta = grow(t.delta, n*out)
	inv := 1 / float32(n)
	var sum float64
	for i := 0; i < n; i++ {
		zi := t.z[i*out : (i+1)*out]
		di := t.delta[i*out : (i+1)*out]
		lse := logSumExp(zi)
		sum += float64(lse - zi[labels[i]])
		for j := range di {
			d := float32(math.Exp(float64(zi[j] - lse)))
			if int32(j) == labels[i] {
				d--
			}
			d *= inv
			// A confident model (large logits) has p_ij far below float32's
			// normal range; δ·x is then subnormal, and x86 arithmetic on
			// subnormal numbers is many times slower. Such a δ is taken as
			// 0: its products with an input x are below 2⁻¹⁰⁰·|x|, under the
			// rounding of any gradient entry that is not itself that small
			// (TestGradConfident, BenchmarkLogreg/confident).
			if d > -deltaFloor && d < deltaFloor {
				d = 0
			}
			di[j] = d
			gb[j] += di[j]
		}
	}
	// G_W = δᵀ·X, four samples at a time so each row of G_W is loaded once
	// per four samples.
	dl := t.delta
	i := 0
	for ; i+4 <= n; i += 4 {
		x0, x1 := inputs[i*in:(i+1)*in], inputs[(i+1)*in:(i+2)*in]
		x2, x3 := inputs[(i+2)*in:(i+3)*in], inputs[(i+3)*in:(i+4)*in]
		for j := 0; j < out; j++ {
			axpy4(dl[i*out+j], dl[(i+1)*out+j], dl[(i+2)*out+j], dl[(i+3)*out+j], x0, x1, x2, x3, gW[j*in:(j+1)*in])
		}
	}
	for ; i < n; i++ {
		for j := 0; j < out; j++ {
			axpy(dl[i*out+j], inputs[i*in:(i+1)*in], gW[j*in:(j+1)*in])
		}
	}
	// g += wd·x, with ‖x‖², ⟨x,g⟩ and ‖g‖² for the loss and the trials.
	wd := float32(t.cfg.WeightDecay)
	var xx, xg, g2 float64
	for i, x := range t.X {
		gi := t.g[i] + wd*x
		t.g[i] = gi
		xx += float64(x * x)
		xg += float64(x * gi)
		g2 += float64(gi * gi)
	}
	t.xx, t.xs, t.ss, t.s = xx, xg, g2, t.g
	loss = sum/float64(n) + 0.5*t.cfg.WeightDecay*xx
	if !t.cfg.SearchAlongD {
		return loss, g2, nil
	}
	// s = d_k as direction will compute it, without advancing h.
	t.sd = grow(t.sd, len(t.g))
	t.s = t.sd
	beta, nu := float32(t.cfg.Beta), float32(t.cfg.Nu)
	var gs, xs, ss float64
	for i, g := range t.g {
		si := g
		if beta != 0 && nu != 0 {
			h := beta*t.h[i] + (1-beta)*g
			si = (1-nu)*g + nu*h
		}
		t.s[i] = si
		gs += float64(g * si)
		xs += float64(t.X[i] * si)
		ss += float64(si * si)
	}
	t.xs, t.ss = xs, ss
	return loss, gs, nil
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func logSumExp(z []float32) float32 {
	m := z[0]
	for _, v := range z[1:] {
		m = max(m, v)
	}
	var s float64
	for _, v := range z {
		s += math.Exp(float64(v - m))
	}
	return m + float32(math.Log(s))
}

// Trial returns f(x − η·s) + 0.5·wd·‖x − η·s‖² on the batch of the last
// [Softmax.Grad], with x unchanged; s is g, or d_k with SearchAlongD.
func (t *Softmax) Trial(eta float64) (float64, error) {
	if t.y == nil {
		return 0, fmt.Errorf("linear: Trial before Grad")
	}
	if math.IsNaN(eta) || math.IsInf(eta, 0) {
		return 0, fmt.Errorf("linear: eta = %v: must be finite", eta)
	}
	in, out, n := t.cfg.In, t.cfg.Out, len(t.y)
	if !t.uOK {
		t.u = grow(t.u, n*out)
		logits(t.u, t.batch, t.s[:out*in], t.s[out*in:], in, out)
		t.uOK = true
	}
	e := float32(eta)
	var sum float64
	for i := 0; i < n; i++ {
		zi, ui := t.z[i*out:(i+1)*out], t.u[i*out:(i+1)*out]
		for j := range t.p {
			t.p[j] = zi[j] - e*ui[j]
		}
		sum += float64(logSumExp(t.p) - t.p[t.y[i]])
	}
	xx := t.xx - 2*eta*t.xs + eta*eta*t.ss
	return sum/float64(n) + 0.5*t.cfg.WeightDecay*xx, nil
}

// Update makes x ← x − lr·d with the QHM direction of the g of the last
// [Softmax.Grad], and returns ⟨x_{k+1}, d_k⟩ and ‖d_k‖².
func (t *Softmax) Update(lr float64) (x1d, d2 float64, err error) {
	if t.y == nil {
		return 0, 0, fmt.Errorf("linear: Update before Grad")
	}
	if err := checkLR(lr); err != nil {
		return 0, 0, err
	}
	t.y = nil // g is spent
	d := t.direction()
	axpy(-float32(lr), d, t.X)
	// In float32 like statopt's per-tensor dot products, with the SIMD
	// kernels: this is all SASA+ adds to a plain step.
	return float64(dot(t.X, d)), float64(dot(d, d)), nil
}

// direction advances the QHM momentum with the g of the last Grad and
// returns d_k: g itself (β = 0 or ν = 0), h (ν = 1) or (1−ν)g + νh.
func (t *Softmax) direction() []float32 {
	beta, nu := float32(t.cfg.Beta), float32(t.cfg.Nu)
	if beta == 0 || nu == 0 {
		return t.g
	}
	axpy(beta-1, t.h, t.h) // h ← βh
	axpy(1-beta, t.g, t.h) // h ← βh + (1−β)g
	if nu == 1 {
		return t.h
	}
	t.d = grow(t.d, len(t.g))
	for i, g := range t.g {
		t.d[i] = (1-nu)*g + nu*t.h[i]
	}
	return t.d
}

// Step is Grad then Update: one plain step at learning rate lr.
func (t *Softmax) Step(inputs []float32, labels []int32, lr float64) (loss, x1d, d2 float64, err error) {
	if loss, _, err = t.Grad(inputs, labels); err != nil {
		return 0, 0, 0, err
	}
	x1d, d2, err = t.Update(lr)
	return loss, x1d, d2, err
}

// logits sets z = X·Wᵀ + b for the n rows of X, with W as out rows of in.
func logits(z, X, W, b []float32, in, out int) {
	n := len(z) / out
	for i := 0; i < n; i++ {
		xi := X[i*in : (i+1)*in]
		zi := z[i*out : (i+1)*out]
		j := 0
		for ; j+4 <= out; j += 4 {
			zi[j], zi[j+1], zi[j+2], zi[j+3] = dot4(xi, W[j*in:(j+1)*in], W[(j+1)*in:(j+2)*in],
				W[(j+2)*in:(j+3)*in], W[(j+3)*in:(j+4)*in])
		}
		for ; j < out; j++ {
			zi[j] = dot(xi, W[j*in:(j+1)*in])
		}
		for j := range zi {
			zi[j] += b[j]
		}
	}
}

// checkLR checks a learning rate, which the updates use as a float32: finite,
// > 0, and neither overflowing float32 nor rounding to 0 there.
func checkLR(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) || float32(lr) == 0 || math.IsInf(float64(float32(lr)), 0) {
		return fmt.Errorf("linear: lr = %v: must be within float32's range (%v to %v)", lr, math.SmallestNonzeroFloat32, math.MaxFloat32)
	}
	return nil
}
