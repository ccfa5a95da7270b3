package stats

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// maxDen bounds the denominator b of the rational a/b that NewWindow
// recognises in θ.
const maxDen = 1 << 20

// Window is statopt's leaky bucket: after n pushes since the last reset it
// holds exactly the most recent N = ⌈θ·n⌉ samples, oldest first (Algorithm 1,
// N ← ⌈θ(k−k_o)⌉). With θ = 1/r (statopt's leak_ratio r) the t-th push
// (t = 0, 1, … since the reset) appends the sample and, if t mod r ≠ 0, drops
// the oldest one.
//
// ⌈θ·n⌉ is computed in integer arithmetic: θ is read as the rational a/b of
// smallest denominator b ≤ 2²⁰ (among the continued-fraction convergents of
// θ) whose nearest float64 is θ, so 0.3 means 3/10 and 1.0/3 means 1/3. If
// there is none, the exact binary value of θ is used.
//
// Push is O(1) amortized; memory stays within a constant factor of N. Create
// windows with NewWindow or NewWindowFromState.
type Window struct {
	theta    float64
	num, den uint64 // θ = num/den; den == 0: use the binary value of θ
	rem      uint64 // num·total mod den
	total    int
	buf      []float64 // live samples are buf[start:]
	start    int
}

// WindowState is a deep copy of a Window, suitable for JSON.
type WindowState struct {
	Theta  float64   // θ in (0, 1]
	Total  int       // pushes since the last reset (n)
	Values []float64 // the ⌈θ·Total⌉ most recent samples, oldest first
}

// NewWindow returns an empty window keeping the fraction θ ∈ (0, 1].
func NewWindow(theta float64) (*Window, error) {
	if !(theta > 0 && theta <= 1) {
		return nil, fmt.Errorf("stats: theta = %v: must be in (0, 1]", theta)
	}
	w := &Window{theta: theta}
	w.num, w.den = rational(theta)
	return w, nil
}

// rational returns the convergent a/b of θ ∈ (0, 1] with the smallest
// b ≤ maxDen such that float64(a)/float64(b) == θ, or (0, 0).
func rational(theta float64) (uint64, uint64) {
	x := new(big.Rat).SetFloat64(theta)
	p, q := new(big.Int).Set(x.Num()), new(big.Int).Set(x.Denom())
	h0, h1 := int64(0), int64(1) // convergent numerators h_{k−2}, h_{k−1}
	k0, k1 := int64(1), int64(0) // and denominators
	a, r := new(big.Int), new(big.Int)
	for q.Sign() != 0 {
		a.QuoRem(p, q, r)
		if !a.IsInt64() || a.Int64() > maxDen {
			break
		}
		ai := a.Int64()
		h0, h1 = h1, ai*h1+h0
		k0, k1 = k1, ai*k1+k0
		if k1 > maxDen {
			break
		}
		if float64(h1)/float64(k1) == theta {
			return uint64(h1), uint64(k1)
		}
		p, q, r = q, r, p
	}
	return 0, 0
}

// ceilN returns ⌈θ·n⌉ for n ≥ 0.
func (w *Window) ceilN(n int) int {
	if w.den != 0 {
		hi, lo := bits.Mul64(w.num, uint64(n))
		lo, c := bits.Add64(lo, w.den-1, 0)
		q, _ := bits.Div64(hi+c, lo, w.den) // hi+c < den since num ≤ den
		return int(q)
	}
	// Exact ceiling of the binary θ times n: the sign of an FMA residual is exact.
	fn := float64(n)
	c := math.Ceil(w.theta * fn)
	if math.FMA(w.theta, fn, -c) > 0 {
		c++
	} else if math.FMA(w.theta, fn, -(c-1)) <= 0 {
		c--
	}
	return int(c)
}

// Push appends v and drops the oldest sample if the window would exceed
// ⌈θ·n⌉. A NaN or ±Inf v is an error and leaves the window unchanged.
func (w *Window) Push(v float64) error {
	if w.theta == 0 {
		return errors.New("stats: Window is not initialized: use NewWindow")
	}
	if !finite(v) {
		return fmt.Errorf("stats: Window.Push: value = %v: must be finite", v)
	}
	live := len(w.buf) - w.start
	if len(w.buf) == cap(w.buf) && w.start >= live { // compact: copies ≤ start, frees start slots
		copy(w.buf, w.buf[w.start:])
		w.buf, w.start = w.buf[:live], 0
	}
	// ⌈θ(n+1)⌉ − ⌈θn⌉ ∈ {0, 1} for θ ≤ 1. With θ = a/b and s = a·n mod b it is
	// 1 iff s = 0 or s + a > b (for θ = 1/r: iff n mod r = 0, statopt's rule).
	var grow bool
	if w.den != 0 {
		grow = w.rem == 0 || w.rem+w.num > w.den
		if w.rem += w.num; w.rem >= w.den {
			w.rem -= w.den
		}
	} else {
		grow = w.ceilN(w.total+1) > w.ceilN(w.total)
	}
	w.buf = append(w.buf, v)
	w.total++
	if !grow {
		w.start++
	}
	return nil
}

// Len returns the number of samples held, N = ⌈θ·Total()⌉.
func (w *Window) Len() int { return len(w.buf) - w.start }

// Total returns the number of pushes since the last reset.
func (w *Window) Total() int { return w.total }

// Theta returns θ.
func (w *Window) Theta() float64 { return w.theta }

// Values returns the samples held, oldest first. The slice is a view into the
// window: it is valid only until the next Push or Reset and must not be
// modified.
func (w *Window) Values() []float64 { return w.buf[w.start:len(w.buf):len(w.buf)] }

// Reset empties the window (statopt's bucket reset at a drop); n restarts at 0.
func (w *Window) Reset() { w.buf, w.start, w.total, w.rem = w.buf[:0], 0, 0, 0 }

// State returns a deep copy of the window.
func (w *Window) State() WindowState {
	return WindowState{Theta: w.theta, Total: w.total, Values: append([]float64{}, w.Values()...)}
}

// NewWindowFromState restores a window saved with State. It checks θ, that
// Total ≥ 0, that len(Values) == ⌈θ·Total⌉ and that every value is finite.
func NewWindowFromState(s WindowState) (*Window, error) {
	w, err := NewWindow(s.Theta)
	if err != nil {
		return nil, err
	}
	if s.Total < 0 {
		return nil, fmt.Errorf("stats: WindowState.Total = %d: must be >= 0", s.Total)
	}
	if want := w.ceilN(s.Total); len(s.Values) != want {
		return nil, fmt.Errorf("stats: len(WindowState.Values) = %d: must be ceil(theta*Total) = %d (theta = %v, Total = %d)",
			len(s.Values), want, s.Theta, s.Total)
	}
	if i := firstNonFinite(s.Values); i >= 0 {
		return nil, fmt.Errorf("stats: WindowState.Values[%d] = %v: must be finite", i, s.Values[i])
	}
	w.total, w.buf = s.Total, append([]float64{}, s.Values...)
	if w.den != 0 {
		hi, lo := bits.Mul64(w.num, uint64(s.Total))
		_, w.rem = bits.Div64(hi%w.den, lo, w.den)
	}
	return w, nil
}

// firstNonFinite returns the index of the first NaN or ±Inf in x, or −1.
func firstNonFinite(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}
