package salsagomlx

import (
	"context"
	"runtime/pprof"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// PhaseLabel is the pprof label key under which the [Trainer] runs each of
// its graphs, and the [Optimizer] its trials and updates (its gradient phase
// runs inside GoMLX's training step, unlabelled). The values name the phase:
// "step" (a fused training step, with or without the statistics), "grad"
// (the gradient phase of a searching step, and of every step whose direction
// is on the host), "trial" (one line-search trial),
// "update" (the update after the search), "eval" (an evaluation) and
// "refresh" (the batch-norm statistics before one). The Go backend's worker
// goroutines inherit the label, so that a CPU profile (salsa train
// --cpuprofile) splits the whole cost of a run by phase:
//
//	go tool pprof -tags cpu.prof
//
// which a profile of the calling goroutine alone underestimates.
const PhaseLabel = "salsa_phase"

// inPhase runs f with the goroutine labelled PhaseLabel=phase.
func inPhase(phase string, f func()) {
	pprof.Do(context.Background(), pprof.Labels(PhaseLabel, phase), func(context.Context) { f() })
}

// call runs e on args under the label PhaseLabel=phase.
func call(phase string, e *model.Exec, args ...any) (out []*tensors.Tensor, err error) {
	inPhase(phase, func() { out, err = e.Call(args...) })
	return out, err
}
