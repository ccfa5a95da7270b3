package stats

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bucket is a literal transcription of statopt's LeakyBucket.add rule with
// ratio r: on the t-th push since reset the sample is appended and, if
// t mod r != 0, the oldest sample is dropped.
type bucket struct {
	r, total int
	vals     []float64
}

func (b *bucket) add(v float64) {
	b.vals = append(b.vals, v)
	if b.total%b.r != 0 {
		b.vals = b.vals[1:]
	}
	b.total++
}

func (b *bucket) reset() { b.vals, b.total = nil, 0 }

func TestWindowMatchesStatopt(t *testing.T) {
	for _, r := range []int{1, 2, 3, 4, 8} {
		rng := rand.New(rand.NewPCG(1, uint64(r)))
		w, err := NewWindow(1 / float64(r))
		if err != nil {
			t.Fatal(err)
		}
		ref := &bucket{r: r}
		resets := 0
		for step := 0; step < 20000; step++ {
			if rng.IntN(1500) == 0 {
				w.Reset()
				ref.reset()
				resets++
			}
			v := rng.NormFloat64()
			if err := w.Push(v); err != nil {
				t.Fatal(err)
			}
			ref.add(v)
			if w.Len() != len(ref.vals) || w.Total() != ref.total || !slices.Equal(w.Values(), ref.vals) {
				t.Fatalf("r=%d step %d: window (Len %d, Total %d) != statopt bucket (count %d, total %d)",
					r, step, w.Len(), w.Total(), len(ref.vals), ref.total)
			}
		}
		if resets == 0 {
			t.Fatalf("r=%d: no reset exercised", r)
		}
	}
}

// TestWindowFraction checks N = ⌈θ·n⌉ against exact rational arithmetic for θ
// not of the form 1/r, and that the window holds the most recent N pushes.
func TestWindowFraction(t *testing.T) {
	for _, tc := range []struct {
		theta float64
		rat   *big.Rat // the intended value of θ
	}{
		{0.3, big.NewRat(3, 10)},
		{0.3333333333333333, big.NewRat(1, 3)},
		{0.55, big.NewRat(11, 20)}, // float64 0.55·100 = 55.000000000000007: math.Ceil gives 56
		{2.0 / 3, big.NewRat(2, 3)},
		{0.9, big.NewRat(9, 10)},
		{0.125, big.NewRat(1, 8)},
		{math.Pi / 4, new(big.Rat).SetFloat64(math.Pi / 4)}, // no small rational: exact binary value
		{1e-7, new(big.Rat).SetFloat64(1e-7)},               // 1/10⁷: denominator above 2²⁰
	} {
		w, err := NewWindow(tc.theta)
		if err != nil {
			t.Fatal(err)
		}
		var all []float64
		for n := 1; n <= 5000; n++ {
			v := float64(n)
			if err := w.Push(v); err != nil {
				t.Fatal(err)
			}
			all = append(all, v)
			prod := new(big.Rat).Mul(tc.rat, new(big.Rat).SetInt64(int64(n)))
			q, m := new(big.Int).QuoRem(prod.Num(), prod.Denom(), new(big.Int))
			want := int(q.Int64())
			if m.Sign() != 0 {
				want++
			}
			if w.Len() != want || !slices.Equal(w.Values(), all[n-want:]) {
				t.Fatalf("theta=%v n=%d: Len = %d, want ceil(%v*n) = %d", tc.theta, n, w.Len(), tc.rat, want)
			}
		}
	}
	// The misrounding the rational detection avoids.
	if th := 0.55; math.Ceil(th*100) != 56 {
		t.Fatal("float64 0.55*100 no longer misrounds; update the comment above")
	}
}

func TestWindowLargeTotal(t *testing.T) {
	w, _ := NewWindow(1.0 / 3)
	if got, want := w.ceilN(1<<62), (1<<62+2)/3; got != want {
		t.Fatalf("ceil(2^62/3) = %d, want %d", got, want)
	}
	w, _ = NewWindow(math.Pi / 4)
	if got := w.ceilN(1 << 40); float64(got) != math.Ceil(math.Pi/4*(1<<40)) {
		t.Fatalf("ceil(pi/4 * 2^40) = %d", got)
	}
}

func TestWindowState(t *testing.T) {
	for _, th := range []float64{0.125, 0.3, math.Pi / 4} {
		testWindowState(t, th)
	}
}

func testWindowState(t *testing.T, theta float64) {
	w, _ := NewWindow(theta)
	for i := range 1003 {
		_ = w.Push(float64(i) * 0.5)
	}
	s := w.State()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var s2 WindowState
	if err := json.Unmarshal(b, &s2); err != nil {
		t.Fatal(err)
	}
	w2, err := NewWindowFromState(s2)
	if err != nil {
		t.Fatal(err)
	}
	s.Values[0] = -1 // State is a deep copy
	if w.Values()[0] == -1 {
		t.Fatal("State shares memory with the window")
	}
	for i := range 500 {
		_ = w.Push(float64(i))
		_ = w2.Push(float64(i))
		if w.Total() != w2.Total() || !slices.Equal(w.Values(), w2.Values()) {
			t.Fatalf("theta=%v: restored window diverges at push %d", theta, i)
		}
	}
}

func TestWindowErrors(t *testing.T) {
	for _, th := range []float64{0, -0.5, 1.5, math.NaN(), math.Inf(1)} {
		if _, err := NewWindow(th); err == nil || !strings.Contains(err.Error(), "theta") || !strings.Contains(err.Error(), "(0, 1]") {
			t.Errorf("NewWindow(%v): err = %v", th, err)
		}
	}
	w, _ := NewWindow(0.5)
	_ = w.Push(1)
	_ = w.Push(2)
	for _, v := range []float64{math.NaN(), math.Inf(-1)} {
		if err := w.Push(v); err == nil || !strings.Contains(err.Error(), "finite") {
			t.Errorf("Push(%v): err = %v", v, err)
		}
	}
	if w.Total() != 2 || !slices.Equal(w.Values(), []float64{2}) {
		t.Errorf("rejected Push changed the window: Total %d, Values %v", w.Total(), w.Values())
	}
	var zero Window
	if err := zero.Push(1); err == nil {
		t.Error("Push on a zero Window: no error")
	}
	for _, s := range []WindowState{
		{Theta: 2, Total: 0},
		{Theta: 0.5, Total: -1},
		{Theta: 0.5, Total: 3, Values: []float64{1}},
		{Theta: 0.5, Total: 3, Values: []float64{1, math.NaN()}},
	} {
		if _, err := NewWindowFromState(s); err == nil {
			t.Errorf("NewWindowFromState(%+v): no error", s)
		}
	}
}
