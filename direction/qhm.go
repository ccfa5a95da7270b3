package direction

import (
	"fmt"
	"math"
	"strings"
)

// QHMConfig configures the quasi-hyperbolic momentum family (paper eq.
// (7)), statopt's momentum=β, qhm_nu=ν and weight_decay=wd.
type QHMConfig struct {
	Beta        float64 // β in [0, 1)
	Nu          float64 // ν in [0, 1]
	WeightDecay float64 // L2 weight decay wd ≥ 0, added to g in place
}

// Validate returns an error naming the first invalid field.
func (c QHMConfig) Validate() error {
	if err := checkRange("QHMConfig.Beta", c.Beta, 0, 1, false, "[0, 1)"); err != nil {
		return err
	}
	if err := checkRange("QHMConfig.Nu", c.Nu, 0, 1, true, "[0, 1]"); err != nil {
		return err
	}
	return checkRange("QHMConfig.WeightDecay", c.WeightDecay, 0, math.Inf(1), false, "[0, +Inf)")
}

// sgd reports whether the configuration reduces to SGD (β = 0 or ν = 0).
func (c QHMConfig) sgd() bool { return c.Beta == 0 || c.Nu == 0 }

// QHM is the quasi-hyperbolic momentum direction of paper eq. (7)
// (Ma & Yarats 2019):
//
//	h_k = β h_{k−1} + (1−β) g_k,   h_{−1} = 0
//	d_k = (1−ν) g_k + ν h_k
//
// Special cases, as stated after eq. (7):
//
//   - ν = 0 or β = 0: SGD, d_k = g_k (eq. (3)). No buffer is allocated
//     and d is a bitwise copy of g.
//   - ν = 1: dampened stochastic heavy ball, d_k = (1−β) g_k + β d_{k−1}
//     (eq. (4)), since then d_k = h_k.
//   - ν = β: Nesterov momentum (eq. (5)) with the learning rate
//     α_QHM = α_NAG/(1−β), the QHM iterate being NAG's look-ahead point.
//
// Derivation of the Nesterov case. NAG (eq. (5), constant α, β) is
// x_{k+1} = x_k − α d_k with d_k = ∇f(y_k) + β d_{k−1}, d_{−1} = 0, where
// y_k = x_k − αβ d_{k−1} is the look-ahead point (y_0 = x_0). Then
//
//	y_{k+1} = x_{k+1} − αβ d_k = y_k + αβ d_{k−1} − α(1+β) d_k
//	        = y_k − α (g_k + β d_k),   g_k = ∇f(y_k),
//
// substituting β d_{k−1} = d_k − g_k. QHM with ν = β, run from x_0 on the
// same gradients, has h_k = (1−β) d_k (the same linear recursion scaled by
// 1−β, both from 0), so its direction is (1−β) g_k + β h_k =
// (1−β)(g_k + β d_k) and its update x ← x − α_QHM (1−β)(g_k + β d_k) is the
// y-update above iff α_QHM = α_NAG/(1−β). By induction the QHM iterate is
// y_k, gradients are taken at the same points, and NAG's own iterate is
// x_k = y_k + α_QHM β h_{k−1}.
//
// Operation order is statopt 0.2's (qhm.py), with constants converted to T
// once: g ← g + wd·x (only if wd ≠ 0); if β = 0 or ν = 0, d = g; otherwise
// h ← β·h + (1−β)·g, then d = h if ν = 1, else d = (1−ν)·g + ν·h.
// statopt treats |β|, |ν| and |ν−1| below 1e-12 as 0 and 1; QHM compares
// exactly. PyTorch's vectorized CPU kernels may evaluate a + s·b as one FMA,
// so agreement with statopt traces is to rounding, not always bitwise.
type QHM[T Float] struct {
	cfg QHMConfig
	n   int
	h   []T // momentum buffer h_k; nil for SGD
}

var _ Direction[float64] = (*QHM[float64])(nil)

// NewQHM returns a QHM direction for n parameters with a zero buffer.
func NewQHM[T Float](cfg QHMConfig, n int) (*QHM[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSize(n); err != nil {
		return nil, err
	}
	q := &QHM[T]{cfg: cfg, n: n}
	if !cfg.sgd() {
		q.h = make([]T, n)
	}
	return q, nil
}

// Config returns the configuration.
func (q *QHM[T]) Config() QHMConfig { return q.cfg }

// Len returns the number of parameters n.
func (q *QHM[T]) Len() int { return q.n }

// Momentum returns the buffer h_k (nil for SGD). It is a view: do not modify.
func (q *QHM[T]) Momentum() []T { return q.h }

// Reset zeroes the momentum buffer.
func (q *QHM[T]) Reset() { clear(q.h) }

// Compute writes d_k into d; see [Direction.Compute].
func (q *QHM[T]) Compute(d, g, x []T) error {
	if err := checkArgs(q.n, d, g, x); err != nil {
		return err
	}
	n := q.n
	d, g, x = d[:n], g[:n], x[:n]
	useWD := q.cfg.WeightDecay != 0
	wd := T(q.cfg.WeightDecay)
	if q.cfg.sgd() {
		if !useWD {
			copy(d, g)
			return nil
		}
		for i := range g {
			gi := g[i] + T(wd*x[i])
			g[i] = gi
			d[i] = gi
		}
		return nil
	}
	h := q.h[:n]
	b, cb := T(q.cfg.Beta), T(1-q.cfg.Beta)
	nu, cnu := T(q.cfg.Nu), T(1-q.cfg.Nu)
	shb := q.cfg.Nu == 1
	for i := range g { // the new h, checked before anything is written
		gi := g[i]
		if useWD {
			gi += T(wd * x[i])
		}
		if hi := T(b*h[i]) + T(cb*gi); !finite(float64(hi)) {
			return overflow(fmt.Sprintf("QHM's h[%d]", i), float64(hi))
		}
	}
	for i := range g {
		gi := g[i]
		if useWD {
			gi += T(wd * x[i])
			g[i] = gi
		}
		hi := T(b*h[i]) + T(cb*gi)
		h[i] = hi
		if shb {
			d[i] = hi
		} else {
			d[i] = T(cnu*gi) + T(nu*hi)
		}
	}
	return nil
}

const qhmMagic = "DQHM"

// MarshalBinary writes a versioned snapshot of the configuration and h.
func (q *QHM[T]) MarshalBinary() ([]byte, error) {
	e := newEnc[T](qhmMagic)
	e.f64(q.cfg.Beta)
	e.f64(q.cfg.Nu)
	e.f64(q.cfg.WeightDecay)
	e.u64(uint64(q.n))
	encVec(e, q.h)
	return e.b, nil
}

// UnmarshalBinary restores a snapshot written by MarshalBinary for the same
// T. It works on a zero QHM; on error q is unchanged.
func (q *QHM[T]) UnmarshalBinary(data []byte) error {
	d := newDec[T](data, qhmMagic, "QHM")
	cfg := QHMConfig{Beta: d.f64(), Nu: d.f64(), WeightDecay: d.f64()}
	n := d.u64()
	if d.err == nil && n > maxSize {
		d.fail("QHM snapshot size %d too large", n)
	}
	if d.err == nil {
		if err := cfg.Validate(); err != nil {
			d.fail("%s", strings.TrimPrefix(err.Error(), "direction: "))
		}
	}
	want := int(n)
	if cfg.sgd() {
		want = 0
	}
	h := decVec[T](d, want)
	if err := d.done(); err != nil {
		return err
	}
	if !cfg.sgd() && h == nil {
		h = make([]T, n)
	}
	q.cfg, q.n, q.h = cfg, int(n), h
	return nil
}
