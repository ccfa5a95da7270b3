package stats

import (
	"math"
	"strings"
	"testing"
)

func TestNormalQuantile(t *testing.T) {
	// Φ⁻¹(0.95) = 1.6448536269514722 (scipy.stats.norm.ppf(0.95)).
	for _, c := range []struct{ p, want float64 }{{0.95, 1.6448536269514722}, {0.5, 0}, {0.975, 1.959963984540054}} {
		if got := NormalQuantile(c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("NormalQuantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if got := NormalQuantile(p); !math.IsNaN(got) {
			t.Errorf("NormalQuantile(%v) = %v, want NaN", p, got)
		}
	}
}

func TestPairedZTest(t *testing.T) {
	// d = 1, 2, 3, 4: mean 2.5, s = √(5/3), z = 2.5/(s/2) = 3.8729833462074170.
	r, err := PairedZTest([]float64{1, 2, 3, 4}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 4 || r.Mean != 2.5 || math.Abs(r.Std-math.Sqrt(5.0/3)) > 1e-15 || math.Abs(r.Z-3.872983346207417) > 1e-12 || !r.Positive {
		t.Errorf("got %+v", r)
	}
	// a mean of 0.1 with s 1 over 100 pairs: z = 1 < 1.645.
	d := make([]float64, 100)
	for i := range d {
		d[i] = 0.1 + math.Copysign(1, float64(i%2)-0.5)*math.Sqrt(0.99)
	}
	if r, err = PairedZTest(d, 0.05); err != nil || r.Positive || math.Abs(r.Z-1) > 1e-12 {
		t.Errorf("z = 1: got %+v, %v", r, err)
	}
	// the sign matters: a significantly negative mean is not positive.
	if r, err = PairedZTest([]float64{-1, -2, -3, -4}, 0.05); err != nil || r.Positive || r.Z > -3 {
		t.Errorf("negative: got %+v, %v", r, err)
	}
	// no spread: the sign of the mean decides.
	if r, _ = PairedZTest([]float64{1, 1, 1}, 0.05); !r.Positive || !math.IsInf(r.Z, 1) {
		t.Errorf("constant 1: got %+v", r)
	}
	if r, _ = PairedZTest([]float64{0, 0, 0}, 0.05); r.Positive || r.Z != 0 {
		t.Errorf("constant 0: got %+v", r)
	}
	for _, c := range []struct {
		d     []float64
		delta float64
		want  string
	}{
		{[]float64{1, 2}, 0, "delta = 0"},
		{[]float64{1, 2}, 1, "delta = 1"},
		{[]float64{1}, 0.05, "1 paired differences"},
		{[]float64{1, math.NaN()}, 0.05, "NaN"},
		{[]float64{1, math.Inf(1)}, 0.05, "Inf"},
	} {
		if _, err := PairedZTest(c.d, c.delta); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PairedZTest(%v, %v): error %v, want one with %q", c.d, c.delta, err, c.want)
		}
	}
}
