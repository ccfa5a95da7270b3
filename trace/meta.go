package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
)

// StatoptConfig holds the keyword arguments of a statopt constructor, under
// the authors' names, plus force_var_mode. Keys absent from the JSON leave
// their field zero; [StatoptConfig.Has] tells which keys were given. An
// unknown or null key is an error, so that a typo is not silently ignored.
type StatoptConfig struct {
	Opt          string  `json:"opt"` // "SASA" (statopt's SASA+ class), "SALSA", "SSLS", ...
	LR           float64 `json:"lr"`  // α₀
	Momentum     float64 `json:"momentum"`
	QHMNu        float64 `json:"qhm_nu"`
	WeightDecay  float64 `json:"weight_decay"`
	Warmup       int     `json:"warmup"`
	DropFactor   float64 `json:"drop_factor"`  // 1/τ: lr is divided by it at a drop (Algorithm 1)
	Significance float64 `json:"significance"` // δ of the (1−δ) confidence interval
	VarMode      string  `json:"var_mode"`     // "iid", "mb", "bm", "olbm"
	LeakRatio    int     `json:"leak_ratio"`
	MinNStats    int     `json:"minN_stats"`
	TestFreq     int     `json:"testfreq"`
	LogStats     int     `json:"logstats"`
	Gamma        float64 `json:"gamma"` // γ, SSLS's smoothing
	LSSdc        float64 `json:"ls_sdc"`
	LSInc        float64 `json:"ls_inc"`
	LSDec        float64 `json:"ls_dec"`
	LSMax        int     `json:"ls_max"`
	LSEvl        int     `json:"ls_evl"`
	LSDir        string  `json:"ls_dir"`
	LSCos        int     `json:"ls_cos"`
	AutoSwitch   int     `json:"auto_switch"`
	ForceVarMode string  `json:"force_var_mode"` // "bm": state['var_mode'] overwritten after construction

	keys map[string]bool
}

// configKeys lists the JSON names of StatoptConfig.
var configKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[StatoptConfig]()
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("json"); tag != "" {
			m[tag] = true
		}
	}
	return m
}()

// Has reports whether the JSON gave the key (an authors' name, e.g. "gamma").
func (c *StatoptConfig) Has(key string) bool { return c.keys[key] }

// Keys returns the keys the JSON gave, sorted.
func (c *StatoptConfig) Keys() []string {
	ks := make([]string, 0, len(c.keys))
	for k := range c.keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// UnmarshalJSON decodes a config object, rejecting unknown and null keys.
func (c *StatoptConfig) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if raw == nil {
		return fmt.Errorf("config: must be an object, not null")
	}
	keys := make(map[string]bool, len(raw))
	for k, v := range raw {
		if !configKeys[k] {
			return fmt.Errorf("config: unknown key %q", k)
		}
		if string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf("config: %s = null: must be a value", k)
		}
		keys[k] = true
	}
	type plain StatoptConfig // without the UnmarshalJSON method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	*c = StatoptConfig(p)
	c.keys = keys
	return nil
}

// Drop is one element [step, new_lr] of meta.json's drops.
type Drop struct {
	Step  int
	NewLR float64
}

// UnmarshalJSON decodes [step, new_lr].
func (d *Drop) UnmarshalJSON(b []byte) error {
	var a []json.RawMessage
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 2 {
		return fmt.Errorf("drop %s: must be [step, new_lr]", b)
	}
	if err := json.Unmarshal(a[0], &d.Step); err != nil {
		return fmt.Errorf("drop %s: step: %w", b, err)
	}
	if err := json.Unmarshal(a[1], &d.NewLR); err != nil {
		return fmt.Errorf("drop %s: new_lr: %w", b, err)
	}
	return nil
}

// Switch is one element [step, reason] of meta.json's switches.
type Switch struct {
	Step   int
	Reason string // "slope" or "stationarity"
}

// UnmarshalJSON decodes [step, reason].
func (s *Switch) UnmarshalJSON(b []byte) error {
	var a []json.RawMessage
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 2 {
		return fmt.Errorf("switch %s: must be [step, reason]", b)
	}
	if err := json.Unmarshal(a[0], &s.Step); err != nil {
		return fmt.Errorf("switch %s: step: %w", b, err)
	}
	if err := json.Unmarshal(a[1], &s.Reason); err != nil {
		return fmt.Errorf("switch %s: reason: %w", b, err)
	}
	return nil
}

// Meta is a *.meta.json: a run's statopt arguments and a summary of its
// decisions. Unknown top-level keys are ignored.
type Meta struct {
	Run                string        `json:"run"`
	Problem            string        `json:"problem"` // "lsq", "logreg", "mlp", ...
	Config             StatoptConfig `json:"config"`
	Steps              int           `json:"steps"`
	FinalFullObjective float64       `json:"final_full_objective"` // full-data loss + L2 after the last step
	FinalLR            float64       `json:"final_lr"`
	Drops              []Drop        `json:"drops"`
	Switches           []Switch      `json:"switches"`
	NTests             int           `json:"n_tests"`
	NSlopeTests        int           `json:"n_slope_tests"`
}

// metaRequired are the top-level keys a meta.json must have.
var metaRequired = []string{"run", "problem", "config", "steps", "final_lr", "drops", "switches", "n_tests", "n_slope_tests"}

// settingsRequired are the keys a meta.json read for its settings only must
// have: the recorded outcomes (steps, final_lr, drops, switches, n_tests,
// n_slope_tests) are results, not settings.
var settingsRequired = []string{"config"}

// DecodeMeta reads one meta.json object from r. All keys of [Meta] must be
// present except final_full_objective.
func DecodeMeta(r io.Reader) (*Meta, error) {
	m, err := decodeMeta(r, metaRequired)
	if err != nil {
		return nil, fmt.Errorf("trace: meta: %w", err)
	}
	return m, nil
}

// DecodeMetaSettings reads one meta.json object from r for its settings, as
// a replay does: only config is required; the other keys of [Meta] are
// optional but, when present, must have their types.
func DecodeMetaSettings(r io.Reader) (*Meta, error) {
	m, err := decodeMeta(r, settingsRequired)
	if err != nil {
		return nil, fmt.Errorf("trace: meta: %w", err)
	}
	return m, nil
}

func decodeMeta(r io.Reader, required []string) (*Meta, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("must be a JSON object, not null")
	}
	var missing []string
	for _, k := range required {
		if _, ok := raw[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing key(s) %s", strings.Join(missing, ", "))
	}
	m := new(Meta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadMeta reads the named meta.json (see [DecodeMeta]).
func ReadMeta(path string) (*Meta, error) { return readMeta(path, metaRequired) }

// ReadMetaSettings reads the named meta.json for its settings (see
// [DecodeMetaSettings]).
func ReadMetaSettings(path string) (*Meta, error) { return readMeta(path, settingsRequired) }

func readMeta(path string, required []string) (*Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	m, err := decodeMeta(f, required)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: %w", path, err)
	}
	return m, nil
}
