package trace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestFormatFloat compares with Python's repr. The want strings were printed
// by /usr/bin/python3 (CPython 3.11.2): print(repr(x)) for each x.
func TestFormatFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{1.0, "1.0"},
		{0.0001, "0.0001"},
		{28.06, "28.06"},
		{1234567.0, "1234567.0"},
		{1e-05, "1e-05"},
		{2.809295934608976e-12, "2.809295934608976e-12"},
		{1e16, "1e+16"},
		{1.5e300, "1.5e+300"},
		{math.NaN(), "nan"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.Copysign(0, -1), "-0.0"},
		{0.0, "0.0"},
		{9999999999999998.0, "9999999999999998.0"},
		{1e15, "1000000000000000.0"},
		{123456789012345680.0, "1.2345678901234568e+17"},
		{0.00012345, "0.00012345"},
		{5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{0.30000000000000004, "0.30000000000000004"}, // Python: 0.1 + 0.2
		{1e22, "1e+22"},
		{-1.5e-7, "-1.5e-07"},
		{100.0, "100.0"},
		{0.001, "0.001"},
		{1.0000000000000002e-06, "1.0000000000000002e-06"}, // README: repeated drops by 10 from 0.1
	} {
		if got := FormatFloat(c.f); got != c.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// TestFormatFloatRoundTrip checks on random doubles (all bit patterns) that
// the output parses back to the same value and has repr's shape: fixed
// notation with a ".digit" exactly when the exponent is in [−4, 16).
func TestFormatFloatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50000; i++ {
		f := math.Float64frombits(rng.Uint64())
		if i%2 == 1 { // also plenty of values of ordinary magnitude
			f = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(44)-22))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := FormatFloat(f)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("FormatFloat(%b) = %q parses to %b, %v", f, s, back, err)
		}
		e := strings.TrimPrefix(strconv.FormatFloat(f, 'e', -1, 64), "-")
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		sci := strings.Contains(s, "e")
		if sci != (exp < -4 || exp >= 16) || (!sci && !strings.Contains(s, ".")) {
			t.Fatalf("FormatFloat(%v) = %q: wrong notation for exponent %d", f, s, exp)
		}
		// The significant digits are Go's shortest ones, which are unique.
		if sigDigits(s) != sigDigits(e) {
			t.Fatalf("FormatFloat(%v) = %q: digits differ from %q", f, s, e)
		}
	}
}

// sigDigits returns the significant digits of a decimal float string.
func sigDigits(s string) string {
	s, _, _ = strings.Cut(s, "e")
	s = strings.NewReplacer("-", "", ".", "").Replace(s)
	return strings.TrimRight(strings.TrimLeft(s, "0"), "0")
}

func BenchmarkFormatFloat(b *testing.B) {
	vals := []float64{0.11000000000000001, 1.4076027397430544, 2.809295934608976e-12, 28.092959346089767, -0.0026585105316255663}
	var buf []byte
	for i := 0; b.Loop(); i++ {
		buf = AppendFloat(buf[:0], vals[i%len(vals)])
	}
}
