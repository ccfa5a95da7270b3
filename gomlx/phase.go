package salsagomlx

import (
	"context"
	"runtime/pprof"
	"sync/atomic"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// PhaseLabel is the pprof label key under which, after [LabelPhases](true),
// the [Trainer] runs each of its graphs, and the [Optimizer] its trials and
// updates (its gradient phase runs inside GoMLX's training step,
// unlabelled). The values name the phase: "step" (a fused training step,
// with or without the statistics), "grad" (the gradient phase of a
// searching step, and of every step whose direction is on the host),
// "trial" (one line-search trial), "update" (the update after the search),
// "eval" (an evaluation) and "refresh" (the batch-norm statistics before
// one). The Go backend's worker goroutines inherit the label, so that a CPU
// profile (salsa train --cpuprofile) splits the whole cost of a run by
// phase:
//
//	go tool pprof -tags cpu.prof
//
// which a profile of the calling goroutine alone underestimates.
const PhaseLabel = "salsa_phase"

var phaseLabels atomic.Bool

// LabelPhases turns the [PhaseLabel] labels on or off for every Trainer and
// Optimizer of the process; they are off by default. Like a CPU profile,
// the setting is process-wide. While it is on, each labelled call replaces
// the calling goroutine's own pprof labels with PhaseLabel alone and clears
// them when it returns: runtime/pprof has no way to read a goroutine's
// labels back and restore them. salsa train --cpuprofile turns it on for
// the profile's length.
func LabelPhases(on bool) { phaseLabels.Store(on) }

// call runs e on args, under the label PhaseLabel=phase when
// [LabelPhases] is on.
func call(phase string, e *model.Exec, args ...any) (out []*tensors.Tensor, err error) {
	if !phaseLabels.Load() {
		return e.Call(args...)
	}
	pprof.Do(context.Background(), pprof.Labels(PhaseLabel, phase), func(context.Context) { out, err = e.Call(args...) })
	return out, err
}
