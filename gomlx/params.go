package salsagomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// Hyperparameters read from the store by [Config.FromStore], the way GoMLX's
// optimizers read theirs (model.GetParamOr on the root scope). The learning
// rate is GoMLX's own "learning_rate" ([optimizer.ParamLearningRate]); Adam's
// β1, β2 and ε are GoMLX's "adam_beta1", "adam_beta2", "adam_epsilon".
const (
	ParamDirection   = "salsa_direction"    // "qhm" or "adam"
	ParamMomentum    = "salsa_momentum"     // QHM β
	ParamNu          = "salsa_nu"           // QHM ν
	ParamWeightDecay = "salsa_weight_decay" // wd
	ParamDecayAll    = "salsa_decay_all"    // bool: Config.DecayAll
	ParamClipNorm    = "salsa_clip_norm"    // Config.ClipNorm
)

// OptimizerName is the name under which the package registers its optimizer
// in GoMLX's optimizer.KnownOptimizers, so that optimizer.FromStore builds
// one when the store's "optimizer" parameter is "salsa": an [*Optimizer]
// with [DefaultConfig] overridden by the store's hyperparameters
// ([Config.FromStore]). Until [Optimizer.Attach] gives it a scheduler it runs
// at the constant learning rate of its Config; pass it (as *Optimizer) to
// [NewTrainer] for SSLS and SALSA.
const OptimizerName = "salsa"

func init() {
	optimizer.KnownOptimizers[OptimizerName] = func(scope *model.Scope) optimizer.Interface {
		cfg, err := DefaultConfig().FromStore(scope.Store())
		if err != nil {
			panic(err)
		}
		opt, err := NewOptimizer(scope.Store(), cfg)
		if err != nil {
			panic(err)
		}
		return opt
	}
}

// FromStore returns c with the hyperparameters the store's root scope sets
// (see [ParamDirection] and the other Param constants, and GoMLX's
// "learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon"): a parameter
// the store does not set keeps c's value. It fails on a value of the wrong
// type or out of range, and on a parameter of the other direction
// (salsa_momentum or salsa_nu with adam, GoMLX's adam_* with qhm), which
// would be ignored.
func (c Config) FromStore(store *model.Store) (cfg Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("salsagomlx: Config.FromStore: %v", r)
		}
	}()
	s := store.RootScope()
	c.LR = model.GetParamOr(s, optimizer.ParamLearningRate, c.LR)
	switch d := model.GetParamOr(s, ParamDirection, c.Direction.String()); d {
	case "qhm":
		c.Direction = QHM
	case "adam":
		c.Direction = Adam
		if c.Beta1 == 0 && c.Beta2 == 0 && c.Eps == 0 {
			c.Beta1, c.Beta2, c.Eps = 0.9, 0.999, 1e-8 // PyTorch's and GoMLX's defaults
		}
	default:
		return c, fmt.Errorf("salsagomlx: %s = %q: must be \"qhm\" or \"adam\"", ParamDirection, d)
	}
	// A parameter of the other direction would be accepted and ignored.
	other := []string{optimizer.ParamAdamBeta1, optimizer.ParamAdamBeta2, optimizer.ParamAdamEpsilon}
	if c.Direction == Adam {
		other = []string{ParamMomentum, ParamNu}
	}
	for _, k := range other {
		if _, set := s.GetParam(k); set {
			return c, fmt.Errorf("salsagomlx: %s is set, but %s = %q does not use it", k, ParamDirection, c.Direction.String())
		}
	}
	c.Beta = model.GetParamOr(s, ParamMomentum, c.Beta)
	c.Nu = model.GetParamOr(s, ParamNu, c.Nu)
	c.Beta1 = model.GetParamOr(s, optimizer.ParamAdamBeta1, c.Beta1)
	c.Beta2 = model.GetParamOr(s, optimizer.ParamAdamBeta2, c.Beta2)
	c.Eps = model.GetParamOr(s, optimizer.ParamAdamEpsilon, c.Eps)
	c.WeightDecay = model.GetParamOr(s, ParamWeightDecay, c.WeightDecay)
	c.DecayAll = model.GetParamOr(s, ParamDecayAll, c.DecayAll)
	c.ClipNorm = model.GetParamOr(s, ParamClipNorm, c.ClipNorm)
	return c, c.validate()
}

// NumExamples is the number of examples of ds when GoMLX knows it: a
// dataset with a NumExamples() int method, as dataset.InMemoryDataset has.
// Pass it to [PaperSALSA] or schedule.Defaults.
func NumExamples(ds train.Dataset) (n int, ok bool) {
	if d, isSized := ds.(interface{ NumExamples() int }); isSized {
		if n := d.NumExamples(); n > 0 {
			return n, true
		}
	}
	return 0, false
}
