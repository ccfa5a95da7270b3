package direction

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchSizes are the MNIST logistic-regression size (784·10 + 10) and 1e6.
var benchSizes = []int{7850, 1_000_000}

func BenchmarkQHM(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { benchQHM[float32](b, n) })
		b.Run(fmt.Sprintf("float64/n=%d", n), func(b *testing.B) { benchQHM[float64](b, n) })
	}
}

// benchQHM times one Compute with momentum, ν = 0.7 and weight decay, the
// most expensive QHM path (g is rewritten with g + wd·x on every call).
func benchQHM[T Float](b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	g, x, d := randVec[T](r, n), randVec[T](r, n), make([]T, n)
	q, err := NewQHM[T](QHMConfig{Beta: 0.9, Nu: 0.7, WeightDecay: 1e-4}, n)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := q.Compute(d, g, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDot(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { benchDot[float32](b, n) })
		b.Run(fmt.Sprintf("float64/n=%d", n), func(b *testing.B) { benchDot[float64](b, n) })
	}
}

var sink float64

func benchDot[T Float](b *testing.B, n int) {
	r := rand.New(rand.NewPCG(2, 2))
	x, y := randVec[T](r, n), randVec[T](r, n)
	for b.Loop() {
		sink = Dot(x, y)
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("float32/n=%d", n), func(b *testing.B) { benchUpdate[float32](b, n) })
		b.Run(fmt.Sprintf("float64/n=%d", n), func(b *testing.B) { benchUpdate[float64](b, n) })
	}
}

func benchUpdate[T Float](b *testing.B, n int) {
	r := rand.New(rand.NewPCG(3, 3))
	x, d := randVec[T](r, n), randVec[T](r, n)
	for b.Loop() {
		Update(x, d, 1e-9)
	}
}
