//go:build goexperiment.simd && amd64

package linear

import "testing"

func BenchmarkDot(b *testing.B) {
	x := make([]float32, 784)
	y := make([]float32, 784)
	for i := range x {
		x[i], y[i] = float32(i%7), float32(i%5)
	}
	var s float32
	b.Run("16", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s += dot16(x, y)
		}
	})
	b.Run("8", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s += dot8(x, y)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s += dotGeneric(x, y)
		}
	})
	b.Run("axpy16", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			axpy16(1e-9, x, y)
		}
	})
	b.Run("axpy8", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			axpy8(1e-9, x, y)
		}
	})
	b.Run("axpygeneric", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			axpyGeneric(1e-9, x, y)
		}
	})
	_ = s
}
