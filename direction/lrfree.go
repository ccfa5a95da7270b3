package direction

import (
	"fmt"
	"math"
)

// LRAware is a [Direction] whose step size is partly its own: the
// learning-rate-free methods D-Adaptation ([DAdaptSGD]), Prodigy
// ([Prodigy]) and DoG ([DoG]), and Schedule-Free ([ScheduleFree]), whose
// averaging weights depend on the rates seen so far.
//
// They keep the package's split of direction from step size: the scheduler's
// learning rate α_k is the methods' own "lr" multiplier (1 in all their
// papers, so a constant schedule at lr 1 runs them as published; a cosine or
// warmup schedule multiplies it, as their reference code does when a PyTorch
// scheduler drives group['lr']). The caller tells the direction α_k with
// SetLR before Compute, and then applies x ← x − α_k·d_k as for any
// direction, e.g. with [Update]:
//
//	dir.SetLR(req.LR)          // the rate the scheduler gave this step
//	dir.Compute(d, g, x)       // d holds the method's own step size
//	direction.Update(x, d, req.LR)
//
// Compute writes d_k already scaled by the method's own step (D-Adaptation's
// d_k/‖g_0‖, Prodigy's d_k, DoG's η_t; Schedule-Free writes the move of its
// gradient point divided by α_k), so that the update above is the method's
// update; EffectiveLR reports the step the last update took, in the terms
// the method's paper logs it.
//
// The rate set by SetLR stays in force until changed (1 on creation); Reset
// does not change it, and snapshots record it.
type LRAware[T Float] interface {
	Direction[T]
	// SetLR sets α_k for the next Compute; lr must be finite and > 0.
	SetLR(lr float64) error
	// LR returns the rate the next Compute uses.
	LR() float64
	// EffectiveLR is the method's step of the last Compute (0 before the
	// first): α_k·d_k/‖g_0‖ for DAdaptSGD, α_k·d_k for Prodigy (times its
	// bias correction when on), α_k·η_t for DoG, and γ_t (α_k, times
	// √(1−β2^t) in the paper's AdamW form) for ScheduleFree.
	EffectiveLR() float64
}

// ComputeAt sets α_k = lr on dir and computes d_k, as the example on
// [LRAware] does, but leaves dir's rate as it was when either call fails, so
// that a refused step (a non-finite g, a rate out of range) changes nothing
// in dir's state.
func ComputeAt[T Float](dir LRAware[T], lr float64, d, g, x []T) error {
	prev := dir.LR()
	if err := dir.SetLR(lr); err != nil {
		return err
	}
	if err := dir.Compute(d, g, x); err != nil {
		// prev was accepted by SetLR before, so putting it back cannot fail
		_ = dir.SetLR(prev)
		return err
	}
	return nil
}

// checkLR validates a learning rate given to SetLR.
func checkLR(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("direction: SetLR(%v): the learning rate must be finite and > 0", lr)
	}
	return nil
}

// checkPosFinite returns an error unless v is finite and > 0.
func checkPosFinite(field string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("direction: %s = %v: must be in (0, +Inf)", field, v)
	}
	return nil
}

// checkGrowth validates a growth rate: ≥ 1, +Inf allowed (no limit).
func checkGrowth(field string, v float64) error {
	if !(v >= 1) {
		return fmt.Errorf("direction: %s = %v: must be in [1, +Inf]", field, v)
	}
	return nil
}

// boolU64 and u64Bool encode flags in snapshots.
func boolU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (d *dec) flag(what string) bool {
	switch v := d.u64(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("%s snapshot %s flag %d: want 0 or 1", d.what, what, v)
		return false
	}
}

// scalar reads a float64 that must be finite (and ≥ 0 if nonneg).
func (d *dec) scalar(what string, nonneg bool) float64 {
	v := d.f64()
	if d.err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || nonneg && v < 0) {
		d.fail("%s snapshot %s = %v: must be finite", d.what, what, v)
	}
	return v
}

// size reads a vector length n.
func (d *dec) size() int {
	n := d.u64()
	if d.err == nil && n > maxSize {
		d.fail("%s snapshot size %d too large", d.what, n)
	}
	return int(n)
}

// norm2 returns Σ v_i², accumulated in float64 in index order.
func norm2[T Float](v []T) float64 { return Dot(v, v) }

// orEmpty returns v, or an empty non-nil slice when v is nil (restored
// buffers of length 0).
func orEmpty[T Float](v []T, n int) []T {
	if v == nil {
		return make([]T, n)
	}
	return v
}
