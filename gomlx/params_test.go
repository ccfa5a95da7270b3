package salsagomlx

import (
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/ml/dataset"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// TestFromStoreAndRegistry: hyperparameters set on the store reach the
// Config, as GoMLX's optimizers read theirs, and optimizer.FromStore with
// "optimizer" = "salsa" builds an *Optimizer with them.
func TestFromStoreAndRegistry(t *testing.T) {
	store := model.NewStore()
	store.SetParams(map[string]any{
		optimizer.ParamOptimizer:    OptimizerName,
		optimizer.ParamLearningRate: 0.05,
		ParamMomentum:               0.8,
		ParamWeightDecay:            5e-4,
		ParamDecayAll:               true,
	})
	cfg, err := DefaultConfig().FromStore(store)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{LR: 0.05, Direction: QHM, Beta: 0.8, Nu: 1, WeightDecay: 5e-4, DecayAll: true}
	if cfg != want {
		t.Errorf("FromStore: %+v, want %+v", cfg, want)
	}
	opt, ok := optimizer.FromStore(store).(*Optimizer)
	if !ok {
		t.Fatal("optimizer.FromStore did not build a *salsagomlx.Optimizer")
	}
	if opt.Config() != want || opt.LR() != 0.05 {
		t.Errorf("registry optimizer: %+v lr %v, want %+v", opt.Config(), opt.LR(), want)
	}

	store.SetParam(ParamDirection, "adam")
	// salsa_momentum is QHM's: with adam it would be ignored
	if _, err := DefaultConfig().FromStore(store); err == nil || !strings.Contains(err.Error(), `salsa_momentum is set, but salsa_direction = "adam" does not use it`) {
		t.Errorf("adam with salsa_momentum set: %v", err)
	}
	adam := model.NewStore()
	adam.SetParams(map[string]any{optimizer.ParamLearningRate: 0.05, ParamDirection: "adam"})
	if cfg, err := DefaultConfig().FromStore(adam); err != nil || cfg.Direction != Adam || cfg.Beta2 != 0.999 {
		t.Errorf("adam: %+v, %v", cfg, err)
	}
	adam.SetParam(ParamDirection, "qhm")
	adam.SetParam(optimizer.ParamAdamBeta1, 0.5)
	if _, err := DefaultConfig().FromStore(adam); err == nil || !strings.Contains(err.Error(), "adam_beta1 is set") {
		t.Errorf("qhm with adam_beta1 set: %v", err)
	}
	store.SetParam(ParamDirection, "sgd")
	if _, err := DefaultConfig().FromStore(store); err == nil || !strings.Contains(err.Error(), ParamDirection) {
		t.Errorf("direction sgd: err = %v", err)
	}
	store.SetParam(ParamDirection, "qhm")
	store.SetParam(ParamMomentum, "high")
	if _, err := DefaultConfig().FromStore(store); err == nil {
		t.Error("a string momentum was accepted")
	}
}

// TestNumExamples: an InMemoryDataset tells its size, a stream does not.
func TestNumExamples(t *testing.T) {
	ds, err := dataset.InMemoryFromData(gobackend.GetBackend(), "five",
		[]any{[][]float32{{1}, {2}, {3}, {4}, {5}}}, []any{[][]int32{{0}, {1}, {0}, {1}, {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := NumExamples(ds); n != 5 || !ok {
		t.Errorf("NumExamples(in memory) = %d, %v; want 5, true", n, ok)
	}
	if n, ok := NumExamples(&toyDataset{}); ok {
		t.Errorf("NumExamples(stream) = %d, true", n)
	}
}
