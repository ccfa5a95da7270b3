package stats_test

import (
	"fmt"
	"math"

	"github.com/salsaopt/salsa/stats"
)

// A window with θ = 1/2 (statopt's leak_ratio 2) keeps the most recent
// ⌈n/2⌉ of n samples.
func ExampleWindow() {
	w, err := stats.NewWindow(0.5)
	if err != nil {
		panic(err)
	}
	for v := 1.0; v <= 7; v++ {
		_ = w.Push(v)
		fmt.Println(w.Total(), w.Len(), w.Values())
	}
	fmt.Println(w.Push(math.NaN()))
	// Output:
	// 1 1 [1]
	// 2 1 [2]
	// 3 2 [2 3]
	// 4 2 [3 4]
	// 5 3 [3 4 5]
	// 6 3 [4 5 6]
	// 7 4 [4 5 6 7]
	// stats: Window.Push: value = NaN: must be finite
}

// SASA+'s test on Δ samples that oscillate around 0 (the interval contains
// 0: drop the learning rate) and around 0.5 (not stationary: keep it).
// statopt's sign check also asks that both half-window means have the same
// sign, which fails on the first series.
func ExampleMeanInterval() {
	for _, offset := range []float64{0, 0.5} {
		delta := make([]float64, 400)
		for i := range delta {
			delta[i] = offset + math.Sin(1.7*float64(i))
		}
		iv, err := stats.MeanInterval(delta, stats.OLBM, 0.05)
		if err != nil {
			panic(err)
		}
		fmt.Printf("mean %.4f, 95%% interval (%.4f, %.4f), dof %d, stationary %v, with sign check %v\n",
			iv.Mean, iv.Lower, iv.Upper, iv.Dof, iv.Stationary(false, false), iv.Stationary(true, false))
	}
	_, err := stats.MeanInterval([]float64{1, 2, 3}, stats.BM, 0.05)
	fmt.Println(err)
	// Output:
	// mean -0.0003, 95% interval (-0.0207, 0.0201), dof 380, stationary true, with sign check false
	// mean 0.4997, 95% interval (0.4793, 0.5201), dof 380, stationary false, with sign check false
	// stats: N = 3: bm needs N >= 4
}

// The SLOPE test on a decreasing training loss and on a flat one.
func ExampleSlopeTest() {
	for _, rate := range []float64{0.01, 0} {
		loss := make([]float64, 200)
		for i := range loss {
			loss[i] = 1/(1+rate*float64(i)) + 0.05*math.Sin(2.3*float64(i))
		}
		res, err := stats.SlopeTest(loss, 800, 0.05)
		if err != nil {
			panic(err)
		}
		fmt.Printf("slope %.5f, t %.2f, prob %.3g, decreasing %v\n", res.Slope, res.T, res.Prob, res.Decreasing)
	}
	// Output:
	// slope -0.00298, t -39.78, prob 1.1e-96, decreasing true
	// slope -0.00001, t -0.13, prob 0.448, decreasing false
}
