package train

import "github.com/salsaopt/salsa/replay"

// KeyApplies returns nil if --set key does something for method, else the
// error salsa train gives for it (which names the methods it applies to).
// The keys of the model and the data apply to every method here; NewPlan
// checks them against the model.
func KeyApplies(key, method string) error {
	s, err := replay.Scheduler(method)
	if err != nil {
		return err
	}
	return checkKeyApplies(key, method, s)
}

// FillDefaults sets what a new run takes from the other options when not
// given: shb-hand's cuts (DefaultDrops of the epochs).
func (o *Options) FillDefaults() {
	if o.Method == "shb-hand" && len(o.Drops) == 0 {
		o.Drops = DefaultDrops(o.Epochs)
	}
}
