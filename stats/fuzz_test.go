package stats

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// series turns fuzz bytes into a float series: mode 0 reads raw float64 bit
// patterns (NaN, ±Inf, subnormals, 1e308 …), mode 1 reads small integers
// scaled by 0.25, which are always finite and never overflow.
func series(mode byte, data []byte) []float64 {
	var x []float64
	if mode%2 == 0 {
		for len(data) >= 8 {
			x = append(x, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		return x
	}
	for _, b := range data {
		x = append(x, float64(int8(b))*0.25)
	}
	return x
}

func FuzzMeanInterval(f *testing.F) {
	f.Add(byte(1), []byte{1, 2, 3, 4, 250, 7, 9, 0, 0, 1}, 0.05)
	f.Add(byte(0), binary.LittleEndian.AppendUint64(make([]byte, 32), math.Float64bits(math.NaN())), 0.1)
	f.Add(byte(1), []byte{5, 5, 5, 5, 5}, 0.5)
	f.Fuzz(func(t *testing.T, mode byte, data []byte, delta float64) {
		w := series(mode, data)
		for _, m := range []VarianceMethod{IID, BM, OLBM} {
			iv, err := MeanInterval(w, m, delta)
			if err != nil {
				if mode%2 == 1 && len(w) >= m.minN() && delta >= 1e-100 && delta < 1 { // tinier δ: |t*| may pass 1e150
					t.Fatalf("%v on finite series of length %d, delta %v: %v", m, len(w), delta, err)
				}
				continue
			}
			if !finite(iv.Mean, iv.Std, iv.HalfWidth, iv.Lower, iv.Upper, iv.Mean1, iv.Mean2) || iv.Std < 0 || iv.Dof < 1 {
				t.Fatalf("%v: non-finite or invalid result without error: %+v", m, iv)
			}
			_ = iv.Stationary(true, true)
		}
	})
}

func FuzzWindow(f *testing.F) {
	f.Add(uint8(8), []byte{1, 2, 3, 0, 4, 5, 6, 7, 8, 9, 10})
	f.Add(uint8(1), []byte{0, 0, 1})
	f.Add(uint8(3), []byte{255, 254, 0, 17})
	f.Fuzz(func(t *testing.T, r uint8, ops []byte) {
		ratio := int(r%16) + 1
		w, err := NewWindow(1 / float64(ratio))
		if err != nil {
			t.Fatal(err)
		}
		ref := &bucket{r: ratio}
		for i, op := range ops {
			switch op {
			case 0:
				w.Reset()
				ref.reset()
			case 255: // rejected push leaves the state unchanged
				if w.Push(math.NaN()) == nil {
					t.Fatal("Push(NaN): no error")
				}
			default:
				if err := w.Push(float64(op)); err != nil {
					t.Fatal(err)
				}
				ref.add(float64(op))
			}
			// O(1) per op (oldest and newest sample), full comparison at the end.
			v := w.Values()
			if w.Total() != ref.total || len(v) != len(ref.vals) || (len(v) > 0 && (v[0] != ref.vals[0] || v[len(v)-1] != ref.vals[len(v)-1])) {
				t.Fatalf("op %d: window (len %d, total %d) != statopt bucket (len %d, total %d)", i, len(v), w.Total(), len(ref.vals), ref.total)
			}
		}
		if !slices.Equal(w.Values(), ref.vals) {
			t.Fatalf("window %v != statopt bucket %v", w.Values(), ref.vals)
		}
		w2, err := NewWindowFromState(w.State())
		if err != nil || !slices.Equal(w2.Values(), w.Values()) || w2.Total() != w.Total() {
			t.Fatalf("state round trip: %v", err)
		}
	})
}

func FuzzSlopeTest(f *testing.F) {
	f.Add(byte(1), []byte{10, 9, 8, 7, 7, 6}, 100.0, 0.05)
	f.Add(byte(0), make([]byte, 40), 0.0, 0.5)
	f.Fuzz(func(t *testing.T, mode byte, data []byte, x0, delta float64) {
		y := series(mode, data)
		res, err := SlopeTest(y, x0, delta)
		if err != nil {
			if mode%2 == 1 && len(y) >= 3 && finite(x0) && delta > 0 && delta < 1 {
				t.Fatalf("finite series of length %d: %v", len(y), err)
			}
			return
		}
		if !finite(res.Slope, res.R, res.T, res.Prob) || res.R < -1 || res.R > 1 || res.Prob < 0 || res.Prob > 1 ||
			res.Decreasing != (res.Prob < delta) {
			t.Fatalf("invalid result without error: %+v", res)
		}
	})
}
