package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveSlope transcribes statopt's linregress: explicit abscissae, centred
// rows, population covariance matrix.
func naiveSlope(y []float64, x0 float64) (slope, r, t, prob float64) {
	n := float64(len(y))
	x := make([]float64, len(y))
	var mx, my float64
	for i := range y {
		x[i] = x0 + float64(i)
		mx += x[i] / n
		my += y[i] / n
	}
	var cxx, cxy, cyy float64
	for i := range y {
		cxx += (x[i] - mx) * (x[i] - mx) / n
		cxy += (x[i] - mx) * (y[i] - my) / n
		cyy += (y[i] - my) * (y[i] - my) / n
	}
	if den := math.Sqrt(cxx * cyy); den != 0 {
		r = max(-1, min(1, cxy/den))
	}
	df := n - 2
	t = r * math.Sqrt(df/((1-r+1e-20)*(1+r+1e-20)))
	return cxy / cxx, r, t, TCDF(t, len(y)-2)
}

func TestSlopeScipyReference(t *testing.T) {
	// scipy 1.10.1: lr = stats.linregress(np.arange(100, 112.), y) gives slope and
	// rvalue; t = r*sqrt(df/((1-r+1e-20)*(1+r+1e-20))); prob = stats.t.cdf(t, 10).
	y := []float64{2.0, 1.9, 1.95, 1.7, 1.8, 1.62, 1.66, 1.5, 1.58, 1.41, 1.47, 1.39}
	res, err := SlopeTest(y, 100, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"slope", res.Slope, -0.05531468531468532},
		{"r", res.R, -0.9514808835685132},
		{"t", res.T, -9.778257613379024},
		{"prob", res.Prob, 9.757478654155892e-07},
	} {
		if e := relErr(c.got, c.want); e > 1e-12 {
			t.Errorf("%s = %v, scipy %v (rel %.2g)", c.name, c.got, c.want, e)
		}
	}
	if res.N != 12 || res.Dof != 10 || !res.Decreasing {
		t.Errorf("%+v", res)
	}
}

func TestSlopeMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{3, 4, 10, 101, 809, 5000} {
		for _, trend := range []float64{-1e-3, 0, 1e-3} {
			y := make([]float64, n)
			for i := range y {
				y[i] = 2 + trend*float64(i) + 0.1*rng.NormFloat64()
			}
			x0 := float64(rng.IntN(100000))
			res, err := SlopeTest(y, x0, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			slope, r, tt, prob := naiveSlope(y, x0)
			if relErr(res.Slope, slope) > 1e-9 || math.Abs(res.R-r) > 1e-12 || math.Abs(res.T-tt) > 1e-9*max(1, math.Abs(tt)) ||
				math.Abs(res.Prob-prob) > 1e-12 {
				t.Errorf("N=%d trend=%v: %+v; naive slope %v r %v t %v prob %v", n, trend, res, slope, r, tt, prob)
			}
			if res.Decreasing != (res.Prob < 0.05) {
				t.Errorf("Decreasing = %v with Prob %v", res.Decreasing, res.Prob)
			}
		}
	}
}

func TestSlopeDegenerate(t *testing.T) {
	res, err := SlopeTest([]float64{1, 1, 1, 1}, 0, 0.05)
	if err != nil || res.R != 0 || res.T != 0 || res.Prob != 0.5 || res.Slope != 0 || res.Decreasing {
		t.Errorf("constant series: %+v %v", res, err)
	}
	res, err = SlopeTest([]float64{3, 2, 1, 0}, 7, 0.05)
	if err != nil || res.R != -1 || res.Slope != -1 || !(res.Prob < 1e-9) || !res.Decreasing {
		t.Errorf("exact line: %+v %v", res, err)
	}
}

func TestSlopeErrors(t *testing.T) {
	y := []float64{1, 2, 3, 4}
	for _, c := range []struct {
		y         []float64
		x0, delta float64
		want      string
	}{
		{y, 0, 0, "delta = 0: must be in (0, 1)"},
		{y, 0, 1.5, "delta = 1.5"},
		{y[:2], 0, 0.05, "N = 2: the slope test needs N >= 3"},
		{y, math.Inf(1), 0.05, "x0 = +Inf"},
		{[]float64{1, math.NaN(), 3}, 0, 0.05, "y[1] = NaN"},
		{[]float64{1e308, -1e308, 1e308}, 0, 0.05, "overflow"},
	} {
		_, err := SlopeTest(c.y, c.x0, c.delta)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SlopeTest(%v, %v, %v): err = %v, want %q", c.y, c.x0, c.delta, err, c.want)
		}
	}
}

// A steeply falling loss of magnitude 1e153 is decreasing: covXX·covYY
// overflows there, and the correlation's denominator must not become +Inf
// (which made r = 0).
func TestSlopeTestHugeLosses(t *testing.T) {
	y := make([]float64, 400)
	for i := range y {
		y[i] = 1e153 * (1 - float64(i)/800)
	}
	res, err := SlopeTest(y, 0, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Decreasing || res.R > -0.99 {
		t.Errorf("SlopeTest on a falling line near 1e300: r = %v, decreasing %v; want r ≈ −1, decreasing", res.R, res.Decreasing)
	}
}
