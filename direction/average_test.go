package direction

import (
	"bytes"
	"testing"
)

// The first averages written out from the definition x̄_t = (1 − 9/(t+8))
// x̄_{t−1} + 9/(t+8) x_t (γ = 8, the DoG reference's averager): x̄_1 = x_1,
// x̄_2 = 0.1 x̄_1 + 0.9 x_2, x̄_3 = (2/11) x̄_2 + (9/11) x_3.
func TestPolyAverage(t *testing.T) {
	a, err := NewPolyAverage[float64](DefaultPolyGamma, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := []float64{5, 5}
	if err := a.Eval(p); err != nil || p[0] != 5 {
		t.Fatalf("Eval before Add: %v, %v", p, err)
	}
	xs := [][]float64{{1, 2}, {3, -1}, {0, 4}}
	x2 := []float64{0.1*1 + 0.9*3, 0.1*2 + 0.9*-1}
	want := [][]float64{{1, 2}, x2, {2.0/11*x2[0] + 9.0/11*0, 2.0/11*x2[1] + 9.0/11*4}}
	for k, x := range xs {
		if err := a.Add(x); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if !closeTo(a.Average()[i], want[k][i]) {
				t.Fatalf("t = %d: x̄ = %v, want %v", k+1, a.Average(), want[k])
			}
		}
	}
	snap, _ := a.MarshalBinary()
	var b PolyAverage[float64]
	if err := b.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	_ = a.Add([]float64{1, 1})
	_ = b.Add([]float64{1, 1})
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if !bytes.Equal(sa, sb) || b.Steps() != 4 {
		t.Error("restored averager differs")
	}
	if err := b.UnmarshalBinary(snap[:len(snap)-1]); err == nil {
		t.Error("truncated snapshot accepted")
	}
	if err := a.Add([]float64{1}); err == nil {
		t.Error("short x accepted")
	}
	a.Reset()
	if a.Steps() != 0 || a.Average()[0] != 0 {
		t.Error("Reset left state")
	}
}
