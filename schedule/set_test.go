package schedule

import (
	"errors"
	"slices"
	"testing"

	"github.com/salsaopt/salsa/stats"
)

// KeyApplies follows the fields each method reads: SALSA reads SSLS, SASA+
// (but its drop_after through salsa_drop_after) and the SLOPE test's θ, δ,
// N_min, K_test only.
// IgnoredFromSwitch: the keys that shape only SASA+'s drops inside SALSA.
func TestIgnoredFromSwitch(t *testing.T) {
	for k, want := range map[string]bool{"tau": true, "divide_lr": true, "keep_momentum": true, "salsa_drop_after": true,
		"theta": false, "nmin": false, "c": false, "drop_after": false, "probe": false, "nope": false} {
		if got := IgnoredFromSwitch(k); got != want {
			t.Errorf("IgnoredFromSwitch(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestKeyApplies(t *testing.T) {
	for _, c := range []struct {
		key, method string
		want        bool
	}{
		{"theta", "salsa", true}, {"theta", "constant", false}, {"zeta", "sasa", true}, {"zeta", "sasa+", false},
		{"drop_after", "sasa+", true}, {"drop_after", "salsa", false}, {"salsa_drop_after", "salsa", true},
		{"salsa_drop_after", "sasa+", false},
		// salsa-probe decays from the switch: SASA+ never drops there
		{"tau", "salsa-probe", false}, {"salsa_drop_after", "salsa-probe", false}, {"keep_momentum", "salsa-probe", false},
		{"divide_lr", "salsa-probe", false}, {"tau", "salsa-budget", true}, {"theta", "salsa-probe", true}, {"slope_theta", "salsa", true}, {"slope_theta", "slope", true},
		{"tau", "salsa", true}, {"tau", "cut", true}, {"c", "ssls", true}, {"c", "sasa+", false},
		{"patience", "salsa", false}, {"patience", "salsa-val", true}, {"theta", "salsa-val", true},
		{"warmup_steps", "warmup", true}, {"warmup_steps", "cut", false}, {"drop_steps", "cut", true},
		{"force_switch_at", "salsa", true}, {"force_switch_at", "ssls", false}, {"variance", "sasa", true},
		{"variance", "slope", false}, {"ls_dir", "salsa", true}, {"nope", "salsa", false},
		// constant never drops; constant-val drops by τ
		{"tau", "constant", false}, {"tau", "constant-val", true}, {"lr0", "constant", true},
	} {
		if got := KeyApplies(c.key, c.method); got != c.want {
			t.Errorf("KeyApplies(%q, %q) = %v, want %v", c.key, c.method, got, c.want)
		}
	}
	// Every key applies to some method.
	for _, k := range Keys() {
		if len(MethodsOf(k)) == 0 {
			t.Errorf("key %q applies to no method", k)
		}
	}
}

// KeysFor maps a FieldError's Go field to the keys that set it, the most
// specific first.
func TestKeysFor(t *testing.T) {
	for _, c := range []struct {
		method, field string
		want          []string
	}{
		{"sasa+", "SASAPlusConfig.NMin", []string{"nmin"}},
		{"salsa", "SlopeConfig.Theta", []string{"slope_theta", "theta"}},
		{"salsa", "SASAPlusConfig.DropAfter", []string{"salsa_drop_after"}},
		{"sasa+", "SASAPlusConfig.DropAfter", []string{"drop_after"}},
		{"cut", "CutConfig.DropSteps[1]", []string{"drop_steps"}},
		{"salsa", "SALSAConfig.ForceSwitchAt", []string{"force_switch_at"}},
		{"ssls", "SSLSConfig.LR0", []string{"lr0"}},
		{"ssls", "NoSuchConfig.X", nil},
	} {
		if got := KeysFor(c.method, c.field); !slices.Equal(got, c.want) {
			t.Errorf("KeysFor(%q, %q) = %q, want %q", c.method, c.field, got, c.want)
		}
	}
	var fe *FieldError
	_, err := NewSASAPlus(SASAPlusConfig{LR0: 1, Theta: 0.5, Delta: 0.1, Tau: 0.1, NMin: 1, KTest: 1, Variance: stats.BM})
	if !errors.As(err, &fe) || fe.Field != "SASAPlusConfig.NMin" || fe.Value != 1 || fe.Want != "must be ≥ 3" {
		t.Errorf("NewSASAPlus(NMin 1) = %v, want a FieldError on SASAPlusConfig.NMin", err)
	}
}
