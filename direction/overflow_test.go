package direction

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOverflowKeepsState feeds every direction finite but extreme inputs
// (gradients and parameters at float's largest values, and rates set high
// where the direction takes one). Each Compute must either succeed with a
// state that snapshots and restores, or fail with an error wrapping
// ErrNonFinite and leave the state and g exactly as they were: a state that
// overflowed would be saved but could not be restored, and an Adam moment at
// +Inf would silently zero its coordinate of d for good.
func TestOverflowKeepsState(t *testing.T) {
	for _, c := range dirCases() {
		t.Run(c.name+"/float32", func(t *testing.T) { testOverflow[float32](t, c, math.MaxFloat32) })
		t.Run(c.name+"/float64", func(t *testing.T) { testOverflow[float64](t, c, math.MaxFloat64) })
	}
}

func testOverflow[T Float](t *testing.T, c dirCase, maxT float64) {
	const n, steps = 8, 16
	refused, tried := 0, 0
	for _, lr := range []float64{1, 1e30} {
		dir, err := newDir[T](c, n)
		if err != nil {
			t.Fatal(err)
		}
		if la, ok := dir.(LRAware[T]); ok {
			if err := la.SetLR(lr); err != nil {
				t.Fatal(err)
			}
		} else if lr != 1 {
			continue
		}
		r := rand.New(rand.NewPCG(3, 4))
		for k := range steps {
			// Ordinary steps, then extremes: g at ±max on some coordinates,
			// with x at max beside it (weight decay's g + λx); g of order
			// √max (a moment's g²); then both everywhere.
			g, x := randVec[T](r, n), randVec[T](r, n)
			for i := range g {
				switch k % 4 {
				case 1:
					if i%3 == 0 {
						g[i] = T(math.Copysign(maxT, float64(g[i])))
						x[i] = g[i]
					}
				case 2:
					g[i] *= T(math.Sqrt(maxT))
				case 3:
					g[i] = T(math.Copysign(maxT, float64(g[i])))
					x[i] = T(maxT)
				}
			}
			before, g0 := snapshot(t, dir), slices.Clone(g)
			d := make([]T, n)
			err := dir.Compute(d, g, x)
			tried++
			if err != nil {
				refused++
				if !errors.Is(err, ErrNonFinite) {
					t.Fatalf("lr %v, step %d: err = %v, want it to wrap ErrNonFinite", lr, k, err)
				}
				if !bytes.Equal(snapshot(t, dir), before) || !sameBits(g, g0) {
					t.Fatalf("lr %v, step %d: the failed Compute (%v) changed the state or g", lr, k, err)
				}
				continue
			}
			b := zeroDir[T](c)
			if err := b.UnmarshalBinary(snapshot(t, dir)); err != nil {
				t.Fatalf("lr %v, step %d: Compute succeeded, and its state does not restore: %v", lr, k, err)
			}
		}
	}
	// The inputs reach both outcomes, except for SGD, which has no state.
	if c.name == "SGD" && refused > 0 || c.name != "SGD" && (refused == 0 || refused == tried) {
		t.Errorf("%d of %d steps refused: want some of each", refused, tried)
	}
}
