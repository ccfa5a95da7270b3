package linear

import (
	"fmt"
)

// Evaluate returns the mean cross-entropy (without the L2 term) and the
// accuracy of x on inputs (n×In) and labels; the batch kept for the trials
// is not touched.
func (t *Softmax) Evaluate(inputs []float32, labels []int32) (loss, acc float64, err error) {
	var sum float64
	correct := 0
	err = t.EvaluateExamples(inputs, labels, func(_ int, l float64, right bool) {
		sum += l
		if right {
			correct++
		}
	})
	if err != nil {
		return 0, 0, err
	}
	n := len(labels)
	return sum / float64(n), float64(correct) / float64(n), nil
}

// EvaluateExamples calls f for each example i in order with its
// cross-entropy (without the L2 term) and whether its largest logit is its
// label's, as Evaluate counts them; the batch kept for the trials is not
// touched.
func (t *Softmax) EvaluateExamples(inputs []float32, labels []int32, f func(i int, loss float64, right bool)) error {
	in, out := t.cfg.In, t.cfg.Out
	n := len(labels)
	if n == 0 || len(inputs) != n*in {
		return fmt.Errorf("linear: Evaluate: len(inputs) = %d: must be len(labels)·In = %d·%d > 0", len(inputs), n, in)
	}
	const chunk = 256
	z := make([]float32, chunk*out)
	W, b := t.X[:out*in], t.X[out*in:]
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		zc := z[:(hi-lo)*out]
		logits(zc, inputs[lo*in:hi*in], W, b, in, out)
		for i := lo; i < hi; i++ {
			c := labels[i]
			if c < 0 || int(c) >= out {
				return fmt.Errorf("linear: Evaluate: labels[%d] = %d: must be in [0, %d)", i, c, out)
			}
			zi := zc[(i-lo)*out : (i-lo+1)*out]
			best := 0
			for j := range zi {
				if zi[j] > zi[best] {
					best = j
				}
			}
			f(i, float64(logSumExp(zi)-zi[c]), int32(best) == c)
		}
	}
	return nil
}

// Momentum returns the QHM momentum h (a view).
func (t *Softmax) Momentum() []float32 { return t.h }

// Gradient returns g_k = ∇f + wd·x of the last Grad (a view), until the
// next Update or Apply.
func (t *Softmax) Gradient() []float32 { return t.g }

// Apply makes x ← x − lr·d for a direction d computed elsewhere (package
// direction's Adam, say) from [Softmax.Gradient], and returns ⟨x_{k+1},d⟩
// and ‖d‖².
func (t *Softmax) Apply(d []float32, lr float64) (x1d, d2 float64, err error) {
	if t.y == nil {
		return 0, 0, fmt.Errorf("linear: Apply before Grad")
	}
	if len(d) != len(t.X) {
		return 0, 0, fmt.Errorf("linear: Apply: len(d) = %d: must be %d", len(d), len(t.X))
	}
	if err := checkLR(lr); err != nil {
		return 0, 0, err
	}
	t.y = nil
	a := float32(lr)
	for i, di := range d {
		x := t.X[i] - a*di
		t.X[i] = x
		x1d += float64(x * di)
		d2 += float64(di * di)
	}
	return x1d, d2, nil
}

// Plain makes x ← x − lr·d with the QHM direction of the last Grad, without
// the statistics: the step of a training loop that runs no SASA+ test, the
// baseline of the overhead benchmarks.
func (t *Softmax) Plain(lr float64) error {
	if t.y == nil {
		return fmt.Errorf("linear: Plain before Grad")
	}
	if err := checkLR(lr); err != nil {
		return err
	}
	t.y = nil
	axpy(-float32(lr), t.direction(), t.X)
	return nil
}
