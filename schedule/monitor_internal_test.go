package schedule

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/salsaopt/salsa/stats"
)

// TestUndoPushRestoresWindow: push then undo gives back the window's state
// exactly, for rational and binary θ, at every length (through the
// compactions of the window's buffer), and the window then goes on as one
// that never saw the push.
func TestUndoPushRestoresWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, theta := range []float64{1, 0.5, 0.125, 0.3, 1.0 / 3, 0.7071067811865476} {
		w, _ := stats.NewWindow(theta)
		twin, _ := stats.NewWindow(theta)
		for i := range 500 {
			before := w.State()
			u, err := push(w, r.NormFloat64())
			if err != nil {
				t.Fatal(err)
			}
			u.undo()
			if got := w.State(); !reflect.DeepEqual(got, before) {
				t.Fatalf("θ = %v, push %d: after undo\n%+v\nwant\n%+v", theta, i, got, before)
			}
			v := r.NormFloat64()
			if _, err := push(w, v); err != nil {
				t.Fatal(err)
			}
			_ = twin.Push(v)
			if !reflect.DeepEqual(w.State(), twin.State()) {
				t.Fatalf("θ = %v, push %d: the window differs from one that never saw the undone push", theta, i)
			}
		}
	}
	var zero undoPush
	zero.undo() // undoes nothing
}
