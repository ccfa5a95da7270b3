package salsagomlx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/loss"

	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/schedule"
)

// A GoMLX checkpoint carries SALSA: saved after the first drop, restored
// into a fresh program (new store, optimizer, scheduler and loop), it gives
// back the learning rate, the step and the scheduler's state, and both
// programs continue bit for bit. The checkpoint holds no scratch values
// (the kept gradient /salsa/g, the kept batch).
func Example_salsaCheckpoint() {
	dir, err := os.MkdirTemp("", "salsa-checkpoint")
	must(err)
	defer os.RemoveAll(dir)

	type program struct {
		store   *model.Store
		ckpt    *checkpoint.Handler
		opt     *salsagomlx.Optimizer
		sched   schedule.Scheduler
		trainer *train.Trainer
		loop    *train.Loop
		losses  []float64
	}
	// start is the user's program up to the loop: on a directory with a
	// checkpoint, checkpoint.Build(...).Done() loads it.
	start := func() *program {
		p := &program{store: model.NewStore()}
		must(p.store.SetRNGStateFromSeed(1))
		p.ckpt, err = checkpoint.Build(p.store).Dir(dir).Keep(2).Done()
		must(err)
		mlp := func(scope *model.Scope, x *Node) *Node {
			x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 16))
			return layers.DenseWithBias(scope.In("out"), x, 3)
		}
		// SALSA's defaults for a small data set (640 examples in batches of
		// 32: N_min = K_test = 20), so that a drop comes early.
		p.sched, err = salsagomlx.PaperSALSA(640, 32, 0.01)
		must(err)
		p.opt, err = salsagomlx.NewOptimizer(p.store, salsagomlx.DefaultConfig())
		must(err)
		p.trainer = salsagomlx.NewTrainer(gobackend.GetBackend(), p.store, mlp, loss.SparseCategoricalCrossEntropyLogits,
			p.opt, nil, nil)
		p.loop = train.NewLoop(p.trainer)
		must(p.opt.Attach(p.loop, p.sched))
		p.loop.OnStep("losses", 0, func(*train.Loop, []*tensors.Tensor) error {
			p.losses = append(p.losses, p.opt.LastStats().Loss)
			return nil
		})
		return p
	}

	// Train until the first drop, then save.
	a := start()
	dropped := false
	a.loop.OnStep("drop?", 0, func(*train.Loop, []*tensors.Tensor) error {
		for _, e := range a.opt.LastResult().Events {
			dropped = dropped || e.Kind == schedule.KindDrop
		}
		return nil
	})
	for chunk := 0; !dropped && chunk < 100; chunk++ {
		_, err = a.loop.RunSteps(&gaussians{seed: uint64(chunk), batch: 32}, 10)
		must(err)
	}
	must(a.ckpt.Save())
	saved, err := a.sched.MarshalBinary()
	must(err)
	fmt.Printf("saved after a drop: step %d, global step %d, lr %.4g\n", a.sched.Step(), a.trainer.GlobalStep(), a.opt.LR())

	names, err := a.ckpt.ListCheckpoints()
	must(err)
	meta, err := os.ReadFile(filepath.Join(dir, names[len(names)-1]+checkpoint.JsonNameSuffix))
	must(err)
	fmt.Println("the checkpoint holds /salsa/lr, /salsa/h, the scheduler:",
		bytes.Contains(meta, []byte(`"var:/salsa/lr"`)), bytes.Contains(meta, []byte(`"var:/salsa/h/`)),
		bytes.Contains(meta, []byte(`"Key": "scheduler"`)))
	fmt.Println("it holds /salsa/g or the kept batch:",
		bytes.Contains(meta, []byte(`"var:/salsa/g/`)) || bytes.Contains(meta, []byte(`"var:/salsa/scratch/`)))

	// A fresh program on the same directory.
	b := start()
	restored, err := b.sched.MarshalBinary()
	must(err)
	fmt.Printf("restored: step %d, global step %d, lr %.4g, same scheduler state: %v\n",
		b.sched.Step(), b.trainer.GlobalStep(), b.opt.LR(), bytes.Equal(saved, restored))

	// Both go on for 100 steps on the same batches.
	na := len(a.losses)
	_, err = a.loop.RunSteps(&gaussians{seed: 1000, batch: 32}, 100)
	must(err)
	_, err = b.loop.RunSteps(&gaussians{seed: 1000, batch: 32}, 100)
	must(err)
	sa, err := a.sched.MarshalBinary()
	must(err)
	sb, err := b.sched.MarshalBinary()
	must(err)
	fmt.Printf("100 steps later: same losses: %v, same lr: %v, same scheduler state: %v, same variables: %v\n",
		fmt.Sprint(a.losses[na:]) == fmt.Sprint(b.losses), a.opt.LR() == b.opt.LR(), bytes.Equal(sa, sb),
		sameVariables(a.store, b.store))
	// Output:
	// saved after a drop: step 180, global step 180, lr 0.3948
	// the checkpoint holds /salsa/lr, /salsa/h, the scheduler: true true true
	// it holds /salsa/g or the kept batch: false
	// restored: step 180, global step 180, lr 0.3948, same scheduler state: true
	// 100 steps later: same losses: true, same lr: true, same scheduler state: true, same variables: true
}

// sameVariables reports whether the two stores hold the same variables, bit
// for bit: all but the adapter's scratch ones and GoMLX's moving-average
// metrics, whose scope names hold a random UUID per metric object, so that
// a new program has new ones.
func sameVariables(a, b *model.Store) bool {
	n := 0
	for va := range a.IterVariables() {
		p := va.Path()
		if strings.HasPrefix(p, "/salsa/g/") || strings.HasPrefix(p, "/salsa/scratch/") || strings.HasPrefix(p, "/salsa/step/") ||
			strings.HasPrefix(p, "/metrics/") {
			continue
		}
		vb := b.GetVariable(p)
		if vb == nil {
			return false
		}
		var ba, bb []byte
		must(va.MustValue().ConstBytes(func(d []byte) { ba = bytes.Clone(d) }))
		must(vb.MustValue().ConstBytes(func(d []byte) { bb = bytes.Clone(d) }))
		if !bytes.Equal(ba, bb) {
			return false
		}
		n++
	}
	return n > 0
}
