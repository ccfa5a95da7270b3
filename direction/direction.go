// Package direction computes the stochastic search directions d_k of the
// paper's update x_{k+1} = x_k − α_k d_k (eq. (2)) on flat slices,
// kept apart from the step size α_k as in optax: the caller applies
// x ← x − α·d, e.g. with [Update].
//
// [QHM] covers SGD (eq. (3)), the dampened stochastic heavy ball
// (eq. (4)), Nesterov momentum (eq. (5)) and quasi-hyperbolic
// momentum (eq. (7)), with the operation order of statopt 0.2. [Adam]
// is the Adam/AdamW baseline. The learning-rate-free baselines
// [DAdaptSGD], [Prodigy] and [DoG], and Schedule-Free SGD/AdamW
// ([ScheduleFree]), are [LRAware] directions: they hold their own step
// size and take the scheduler's rate as a multiplier.
//
// Every [Direction.Compute] validates its arguments before it changes
// anything: on a length mismatch or a NaN/±Inf in g or x it returns an error
// and leaves the direction's state and g exactly as they were, so the caller
// may skip the batch. The same holds when finite inputs would take the state
// out of range (an Adam moment g² above float32's largest value, say): a
// state at ±Inf could be saved but not restored, and an Adam moment at +Inf
// would zero its coordinate of d for good. Such a Compute checks the new
// state in a first pass before it writes anything. Outputs are not checked
// for overflow; a diverged run shows up as ±Inf/NaN in d, which
// [HasNonFinite] detects.
//
// The element loops write each product to T with an explicit conversion, so
// the Go compiler never fuses a·b+c into an FMA and results are the same on
// every architecture.
package direction

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Float is the element type of parameters, gradients and directions.
type Float interface{ ~float32 | ~float64 }

// Direction computes d_k from the gradient g_k. Implementations: [QHM],
// [Adam], and the [LRAware] directions [DAdaptSGD], [Prodigy], [DoG] and
// [ScheduleFree].
type Direction[T Float] interface {
	// Compute writes d_k into d. g is the raw mini-batch gradient at x; if
	// the direction has an L2 weight decay wd, g is overwritten in place with
	// g + wd·x (as statopt does, so that a line search along g sees the
	// regularized gradient). len(d) == len(g) == len(x) == Len() else error.
	// d may be the same slice as g; partially overlapping slices are not
	// allowed.
	Compute(d, g, x []T) error
	// Reset zeroes the momentum/moment buffers (SASA+ does this on a
	// learning-rate drop), after which the direction behaves as a fresh one.
	Reset()
	// Len is the number of parameters n.
	Len() int

	// MarshalBinary writes a versioned snapshot of the configuration and the
	// buffers; UnmarshalBinary restores it (replacing configuration and size),
	// after which Compute continues bit-identically.
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// ErrNonFinite is wrapped by the errors that report a NaN or ±Inf input.
var ErrNonFinite = errors.New("must be finite")

// Dot returns Σ a_i·b_i, accumulated in float64 in index order. It panics if
// len(a) != len(b), a programming error like an index out of range.
func Dot[T Float](a, b []T) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("direction: Dot: len(a) = %d != len(b) = %d", len(a), len(b)))
	}
	b = b[:len(a)]
	var s float64
	for i, ai := range a {
		s += float64(float64(ai) * float64(b[i])) // conversion: no FMA
	}
	return s
}

// Update applies x ← x − lr·d, with lr converted to T once; this is statopt's
// x.add_(−lr, d), bit for bit. It panics if len(x) != len(d).
func Update[T Float](x, d []T, lr float64) {
	if len(x) != len(d) {
		panic(fmt.Sprintf("direction: Update: len(x) = %d != len(d) = %d", len(x), len(d)))
	}
	a := T(lr)
	d = d[:len(x)]
	for i, di := range d {
		x[i] -= T(a * di)
	}
}

// HasNonFinite reports whether v holds a NaN or ±Inf.
func HasNonFinite[T Float](v []T) bool { return firstNonFinite(v) >= 0 }

// firstNonFinite returns the index of the first NaN or ±Inf in v, or −1.
// The common all-finite case is a branch-free pass: v−v is 0 for finite v
// and NaN for NaN or ±Inf, so the four partial sums stay 0 unless one is hit.
func firstNonFinite[T Float](v []T) int {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		s0 += w[0] - w[0]
		s1 += w[1] - w[1]
		s2 += w[2] - w[2]
		s3 += w[3] - w[3]
	}
	for ; i < len(v); i++ {
		s0 += v[i] - v[i]
	}
	if s0+s1+s2+s3 == 0 {
		return -1
	}
	for i, x := range v {
		if x-x != 0 {
			return i
		}
	}
	return -1 // not reached
}

// checkArgs validates the arguments of Compute for a direction of size n.
func checkArgs[T Float](n int, d, g, x []T) error {
	if len(d) != n || len(g) != n || len(x) != n {
		return fmt.Errorf("direction: Compute: len(d) = %d, len(g) = %d, len(x) = %d: must all equal n = %d",
			len(d), len(g), len(x), n)
	}
	if i := firstNonFinite(g); i >= 0 {
		return fmt.Errorf("direction: Compute: g[%d] = %v: %w", i, g[i], ErrNonFinite)
	}
	if i := firstNonFinite(x); i >= 0 {
		return fmt.Errorf("direction: Compute: x[%d] = %v: %w", i, x[i], ErrNonFinite)
	}
	return nil
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return v-v == 0 }

// overflow is the error of a Compute refused because finite inputs would
// take the state, named by what (e.g. "Adam's v[3]"), to v.
func overflow(what string, v float64) error {
	return fmt.Errorf("direction: Compute: %s would be %v (g or x too large); the state is left as it was: %w", what, v, ErrNonFinite)
}

// checkRange returns an error unless lo ≤ v < hi (v ≤ hi if closed) and v is
// finite; rng is the range as printed.
func checkRange(field string, v, lo, hi float64, closed bool, rng string) error {
	ok := v >= lo && (v < hi || closed && v == hi)
	if !ok || math.IsInf(v, 0) {
		return fmt.Errorf("direction: %s = %v: must be in %s", field, v, rng)
	}
	return nil
}

// checkSize validates the size n of a new direction.
func checkSize(n int) error {
	if n < 0 {
		return fmt.Errorf("direction: n = %d: must be >= 0", n)
	}
	return nil
}

// Snapshot layout (little endian): magic [4]byte, version byte, element size
// byte (4 or 8), then the type-specific fields written with the enc helpers.
const snapVersion = 1

// maxSize bounds n in a snapshot so that it converts to int.
const maxSize = math.MaxInt

func elemSize[T Float]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

type enc struct{ b []byte }

func newEnc[T Float](magic string) *enc {
	e := &enc{}
	e.b = append(e.b, magic...)
	e.b = append(e.b, snapVersion, byte(elemSize[T]()))
	return e
}

func (e *enc) f64(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *enc) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

func encVec[T Float](e *enc, v []T) {
	e.u64(uint64(len(v)))
	if elemSize[T]() == 4 {
		for _, x := range v {
			e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(float32(x)))
		}
		return
	}
	for _, x := range v {
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(float64(x)))
	}
}

type dec struct {
	b    []byte
	what string
	err  error
}

func newDec[T Float](b []byte, magic, what string) *dec {
	d := &dec{b: b, what: what}
	if len(b) < len(magic)+2 || string(b[:len(magic)]) != magic {
		d.fail("not a %s snapshot", what)
		return d
	}
	if v := b[len(magic)]; v != snapVersion {
		d.fail("%s snapshot version %d: want %d", what, v, snapVersion)
		return d
	}
	if s := int(b[len(magic)+1]); s != elemSize[T]() {
		d.fail("%s snapshot has %d-byte elements: want %d", what, s, elemSize[T]())
		return d
	}
	d.b = b[len(magic)+2:]
	return d
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("direction: UnmarshalBinary: "+format, args...)
	}
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.fail("%s snapshot truncated", d.what)
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) f64() float64 {
	if p := d.take(8); p != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	return 0
}

func (d *dec) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// decVec reads a vector written by encVec, which must have length want; it
// returns nil when want is 0.
func decVec[T Float](d *dec, want int) []T {
	m := d.u64()
	if d.err != nil {
		return nil
	}
	if m != uint64(want) {
		d.fail("%s snapshot buffer length %d: want %d", d.what, m, want)
		return nil
	}
	if want == 0 {
		return nil
	}
	s := elemSize[T]()
	if m > uint64(len(d.b)/s) {
		d.fail("%s snapshot truncated", d.what)
		return nil
	}
	p := d.take(want * s)
	if p == nil {
		return nil
	}
	v := make([]T, want)
	for i := range v {
		if s == 4 {
			v[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:])))
		} else {
			v[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])))
		}
	}
	if i := firstNonFinite(v); i >= 0 {
		d.fail("%s snapshot buffer element %d = %v: %v", d.what, i, v[i], ErrNonFinite)
	}
	return v
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes in %s snapshot", len(d.b), d.what)
	}
	return d.err
}
