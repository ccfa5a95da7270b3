package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkWindowPush measures the cost of one Push into a θ = 1/8 window
// holding between N and 2N samples, N = 1e3, 1e5, 1e6: it must not grow
// with N. The window is refilled (untimed) when it reaches 2N.
func BenchmarkWindowPush(b *testing.B) {
	for _, size := range []int{1e3, 1e5, 1e6} {
		b.Run(fmt.Sprintf("N=%d", size), func(b *testing.B) {
			w, _ := NewWindow(1.0 / 8)
			fill := func() {
				w.Reset()
				for w.Len() < size {
					_ = w.Push(1)
				}
			}
			fill()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = w.Push(float64(i))
				if w.Len() == 2*size {
					b.StopTimer()
					fill()
					b.StartTimer()
				}
			}
		})
	}
}

func benchSeries(n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// BenchmarkMeanInterval times one test (mean, σ̂, t quantile) at N = 1e4
// and 1e5: the cost must grow linearly in N.
func BenchmarkMeanInterval(b *testing.B) {
	for _, n := range []int{1e4, 1e5} {
		w := benchSeries(n)
		for _, m := range []VarianceMethod{IID, BM, OLBM} {
			b.Run(fmt.Sprintf("%v/N=%d", m, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := MeanInterval(w, m, 0.05); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkSlopeTest(b *testing.B) {
	for _, n := range []int{1e4, 1e5} {
		y := benchSeries(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := SlopeTest(y, 0, 0.05); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
