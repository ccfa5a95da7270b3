package salsagomlx

import (
	"fmt"
	"math"

	"github.com/salsaopt/salsa/direction"
)

// Direction selects the update direction d_k of a [Trainer].
type Direction int

const (
	// QHM is statopt's qhm_update: h ← βh + (1−β)g, d = (1−ν)g + νh.
	QHM Direction = iota
	// Adam is Kingma & Ba's direction with L2 in g (PyTorch's Adam with
	// weight_decay): m ← β1·m + (1−β1)g, v ← β2·v + (1−β2)g²,
	// d = m̂/(√v̂ + ε) with m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
	Adam
	// Host is a direction of package direction run on the host: each step
	// copies the parameters and the gradient to flat float32 vectors, calls
	// the direction's Compute and writes the parameters back (see
	// [HostConfig]). Only a [Trainer] runs it, not an [Optimizer].
	Host
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case QHM:
		return "qhm"
	case Adam:
		return "adam"
	case Host:
		return "host"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Config configures a [Trainer] or an [Optimizer].
type Config struct {
	LR          float64   // α_0, the initial learning rate; > 0
	Direction   Direction // QHM (the zero value), Adam or Host
	Beta        float64   // QHM momentum β (statopt's momentum), in [0, 1)
	Nu          float64   // QHM ν (statopt's qhm_nu), in [0, 1]
	Beta1       float64   // Adam β1, in [0, 1)
	Beta2       float64   // Adam β2, in [0, 1)
	Eps         float64   // Adam ε, finite and > 0
	WeightDecay float64   // wd ≥ 0: L2 term 0.5·wd·‖x‖² in the loss, wd·x in g

	// DecayAll applies the weight decay to every trainable variable, as
	// PyTorch's SGD(model.parameters(), weight_decay=wd) does, and with it
	// the paper's runs and statopt. When false, only variables of rank ≥ 2
	// decay (dense and convolution weights, embeddings): biases and
	// batch-norm scales and offsets, all of rank 1, do not.
	DecayAll bool

	// ClipNorm > 0 rescales the gradient of the loss (without the L2 term)
	// to a global norm of at most ClipNorm before wd·x is added, as
	// torch.nn.utils.clip_grad_norm_ before an SGD step with weight_decay.
	// 0 turns clipping off.
	ClipNorm float64

	// SearchAlongD makes [Trainer.Trial] evaluate f(x − η·d) with the
	// direction d_k the update will take (QHM: (1−ν)g + ν(βh + (1−β)g)),
	// and [Trainer.Grad] return ⟨g,d⟩ instead of ‖g‖²: the line search of
	// [schedule.AlongD]. Only the QHM direction has it.
	SearchAlongD bool

	// Host configures the Host direction (a pointer, so that Config stays
	// comparable).
	Host *HostConfig
}

// HostConfig configures the [Host] direction: one of package direction's
// [direction.LRAware] methods (Schedule-Free, Prodigy, D-Adaptation, DoG)
// on the parameters flattened in their creation order. Its gradient is
// Config's g: clipped, with the L2 term wd·x added, so the direction's own
// weight decay should be 0.
type HostConfig struct {
	// New builds the direction for n parameters. It is called at the first
	// update; a snapshot's direction replaces it (its configuration too).
	New func(n int) (direction.LRAware[float32], error)
	// Average evaluates the model at the polynomial-decay average of the
	// iterates ([direction.PolyAverage], γ = AverageGamma), as DoG's
	// authors advise, instead of at the parameters. A Schedule-Free
	// direction is evaluated at its own x, and refuses it (at the first
	// update).
	Average      bool
	AverageGamma float64
}

// DefaultConfig is the paper's direction at its default learning rate
// (Table 1): dampened heavy ball (QHM with β = 0.9, ν = 1), α_0 = 0.01, no
// weight decay, every variable of rank ≥ 2 decaying when WeightDecay is set.
func DefaultConfig() Config {
	return Config{LR: 0.01, Direction: QHM, Beta: 0.9, Nu: 1}
}

func (c Config) validate() error {
	if err := checkLR("Config.LR", c.LR); err != nil {
		return err
	}
	switch {
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return fmt.Errorf("salsagomlx: Config.WeightDecay = %v: must be finite and >= 0", c.WeightDecay)
	case !(c.ClipNorm >= 0) || math.IsInf(c.ClipNorm, 0):
		return fmt.Errorf("salsagomlx: Config.ClipNorm = %v: must be finite and >= 0 (0 turns clipping off)", c.ClipNorm)
	}
	if c.SearchAlongD && c.Direction != QHM {
		return fmt.Errorf("salsagomlx: Config.SearchAlongD with Direction %v: only QHM searches along d", c.Direction)
	}
	switch c.Direction {
	case QHM:
		switch {
		case !(c.Beta >= 0 && c.Beta < 1):
			return fmt.Errorf("salsagomlx: Config.Beta = %v: must be in [0, 1)", c.Beta)
		case !(c.Nu >= 0 && c.Nu <= 1):
			return fmt.Errorf("salsagomlx: Config.Nu = %v: must be in [0, 1]", c.Nu)
		}
	case Adam:
		switch {
		case !(c.Beta1 >= 0 && c.Beta1 < 1):
			return fmt.Errorf("salsagomlx: Config.Beta1 = %v: must be in [0, 1)", c.Beta1)
		case !(c.Beta2 >= 0 && c.Beta2 < 1):
			return fmt.Errorf("salsagomlx: Config.Beta2 = %v: must be in [0, 1)", c.Beta2)
		case !(c.Eps > 0) || math.IsInf(c.Eps, 0):
			return fmt.Errorf("salsagomlx: Config.Eps = %v: must be finite and > 0", c.Eps)
		}
	case Host:
		switch {
		case c.Host == nil || c.Host.New == nil:
			return fmt.Errorf("salsagomlx: Config.Host and Config.Host.New: must not be nil for the Host direction")
		case c.Host.Average && (!(c.Host.AverageGamma >= 0) || math.IsInf(c.Host.AverageGamma, 0)):
			return fmt.Errorf("salsagomlx: Config.Host.AverageGamma = %v: must be finite and >= 0", c.Host.AverageGamma)
		}
	default:
		return fmt.Errorf("salsagomlx: Config.Direction = %d: must be QHM (0), Adam (1) or Host (2)", int(c.Direction))
	}
	return nil
}
