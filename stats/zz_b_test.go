package stats

import "testing"

var sink float64

func BenchmarkTQ(b *testing.B) {
	for _, d := range []int{9, 316, 99684, 99999} {
		b.Run("", func(b *testing.B) { for i := 0; i < b.N; i++ { sink = TQuantile(0.025, d) } })
	}
}
func BenchmarkMean(b *testing.B) {
	w := benchSeries(1e5)
	for i := 0; i < b.N; i++ { sink = Mean(w) }
}
