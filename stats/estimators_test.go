package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refSeries is a fixed series (N = 23: q = 4, p = 5, 3 samples in no batch).
var refSeries = []float64{0.37, -1.21, 0.85, 2.4, -0.03, -0.66, 1.12, 0.5, -2.05, 0.91, 0.14, -0.27,
	1.63, -0.88, 0.02, 0.49, -1.37, 0.76, 0.31, -0.12, 1.05, -0.58, 0.2}

// naiveStd is the textbook O(N·q) form of each estimator.
func naiveStd(m VarianceMethod, w []float64) (float64, int) {
	n := len(w)
	mean := 0.0
	for _, v := range w {
		mean += v / float64(n)
	}
	q := int(math.Floor(math.Sqrt(float64(n))))
	var ys []float64
	switch m {
	case IID:
		ss := 0.0
		for _, v := range w {
			ss += (v - mean) * (v - mean)
		}
		return math.Sqrt(ss / float64(n-1)), n - 1
	case BM:
		for j := 0; (j+1)*q <= n; j++ {
			ys = append(ys, Mean(w[j*q:(j+1)*q]))
		}
	case OLBM:
		for j := 0; j+q <= n; j++ {
			s := 0.0
			for _, v := range w[j : j+q] {
				s += v
			}
			ys = append(ys, s/float64(q))
		}
	}
	ss, mm := 0.0, float64(len(ys))
	for _, y := range ys {
		ss += (y - mean) * (y - mean)
	}
	if m == BM {
		return math.Sqrt(float64(q) / (mm - 1) * ss), q - 1
	}
	return math.Sqrt(float64(q) * float64(n) / (mm * (mm - 1)) * ss), n - q
}

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

func TestStdMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	sizes := []int{4, 5, 8, 9, 15, 16, 17, 99, 100, 101, 257, 1000, 4099}
	for _, n := range sizes {
		for _, offset := range []float64{0, 1e3} { // offset: cancellation in Y − mean
			w := make([]float64, n)
			x := 0.0
			for i := range w {
				x = 0.7*x + rng.NormFloat64()
				w[i] = offset + x
			}
			for _, m := range []VarianceMethod{IID, BM, OLBM} {
				std, dof, err := Std(m, w, Mean(w))
				if err != nil {
					t.Fatal(err)
				}
				ws, wd := naiveStd(m, w)
				if dof != wd || relErr(std, ws) > 1e-10 {
					t.Errorf("%v N=%d offset=%v: std %v dof %d, naive %v dof %d (rel %.2g)", m, n, offset, std, dof, ws, wd, relErr(std, ws))
				}
			}
		}
	}
}

func TestStdScipyReference(t *testing.T) {
	// numpy 1.24.2 on refSeries: w.mean(); np.std(w, ddof=1); BM with
	// Y = w[:p*q].reshape(p, q).mean(1), sqrt(q/(p-1))*np.linalg.norm(Y-mean);
	// OLBM with Y = np.convolve(w, np.ones(q)/q, 'valid'),
	// sqrt(q*N/(M*(M-1)))*np.linalg.norm(Y-mean).
	const mean = 0.15565217391304348
	if got := Mean(refSeries); relErr(got, mean) > 1e-15 {
		t.Errorf("Mean = %v, numpy %v", got, mean)
	}
	for _, c := range []struct {
		m   VarianceMethod
		std float64
		dof int
	}{{IID, 1.0069297442629366, 22}, {BM, 0.7230372280704523, 3}, {OLBM, 0.72287867077018, 19}} {
		std, dof, err := Std(c.m, refSeries, Mean(refSeries))
		if err != nil || dof != c.dof || relErr(std, c.std) > 1e-14 {
			t.Errorf("%v: std %v dof %d err %v; numpy std %v dof %d", c.m, std, dof, err, c.std, c.dof)
		}
	}
}

func TestOLBMLongSeriesAccuracy(t *testing.T) {
	// A long series with a large offset: the re-anchored running sum keeps the
	// error at the level of a direct window sum.
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, 40000)
	for i := range w {
		w[i] = 1e6 + rng.NormFloat64()
	}
	std, _, _ := Std(OLBM, w, Mean(w))
	ws, _ := naiveStd(OLBM, w)
	if relErr(std, ws) > 1e-8 {
		t.Errorf("OLBM std %v, naive %v (rel %.2g)", std, ws, relErr(std, ws))
	}
}

func TestStdErrors(t *testing.T) {
	for _, c := range []struct {
		m    VarianceMethod
		w    []float64
		want string
	}{
		{IID, []float64{1}, "N = 1: iid needs N >= 2"},
		{BM, []float64{1, 2, 3}, "N = 3: bm needs N >= 4"},
		{OLBM, nil, "N = 0: olbm needs N >= 2"},
		{VarianceMethod(9), []float64{1, 2, 3, 4}, "variance method = 9"},
		{OLBM, []float64{1, math.NaN(), 3, 4}, "w[1] = NaN"},
		{BM, []float64{1, 2, math.Inf(1), 4}, "w[2] = +Inf"},
		// N = 5, q = 2: w[4] is in no batch, only in the mean
		{BM, []float64{1, 2, 3, 4, math.Inf(1)}, "w[4] = +Inf"},
		{BM, []float64{1, 2, 3, 4, math.NaN()}, "w[4] = NaN"},
	} {
		_, _, err := Std(c.m, c.w, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Std(%v, %v): err = %v, want %q", c.m, c.w, err, c.want)
		}
	}
	if _, _, err := Std(IID, []float64{1, 2}, math.NaN()); err == nil || !strings.Contains(err.Error(), "mean = NaN") {
		t.Errorf("Std with NaN mean: err = %v", err)
	}
	if !math.IsNaN(Mean(nil)) {
		t.Error("Mean(nil) is not NaN")
	}
}

func TestVarianceMethodNames(t *testing.T) {
	for _, m := range []VarianceMethod{IID, BM, OLBM} {
		got, err := ParseVarianceMethod(m.String())
		if err != nil || got != m {
			t.Errorf("ParseVarianceMethod(%q) = %v, %v", m.String(), got, err)
		}
	}
	for _, s := range []string{"mb", "", "BM"} {
		if _, err := ParseVarianceMethod(s); err == nil {
			t.Errorf("ParseVarianceMethod(%q): no error", s)
		}
	}
	if VarianceMethod(0).String() != "VarianceMethod(0)" {
		t.Error(VarianceMethod(0).String())
	}
}

func TestIsqrt(t *testing.T) {
	for n := 0; n < 100000; n++ {
		q := isqrt(n)
		if q*q > n || (q+1)*(q+1) <= n {
			t.Fatalf("isqrt(%d) = %d", n, q)
		}
	}
}
