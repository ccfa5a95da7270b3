package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// Methods are the method names, those of salsa train's --method plus
// constant (a meta.json's QHM or SGD) and the other -val wrappers of package
// schedule.
var Methods = []string{"salsa", "salsa-budget", "salsa-probe", "sasa+", "sasa", "ssls", "slope", "shb-hand", "adam-warmup", "constant",
	"salsa-val", "sasa+-val", "sasa-val", "slope-val", "constant-val",
	"schedule-free-sgd", "schedule-free-adamw", "prodigy", "dadapt-sgd", "dog", "cosine", "wsd", "plateau"}

// Aliases are older names of methods: the scheduler names package schedule
// uses for train's shb-hand and adam-warmup.
var Aliases = map[string]string{"cut": "shb-hand", "warmup": "adam-warmup"}

// schedulerOf maps the methods whose scheduler (a schedule.New name) is not
// their own name: train's learning-rate-free and schedule-free peers run
// their authors' schedules (a linear warmup then constant for Schedule-Free,
// constant for Prodigy, D-Adaptation and DoG) with their own direction,
// which a replay of the scheduler does not need.
var schedulerOf = map[string]string{"shb-hand": "cut", "adam-warmup": "warmup",
	"schedule-free-sgd": "warmup", "schedule-free-adamw": "warmup", "prodigy": "constant", "dadapt-sgd": "constant", "dog": "constant"}

// Canonical returns the method a name or an alias names.
func Canonical(method string) (string, error) {
	if m, ok := Aliases[method]; ok {
		return m, nil
	}
	for _, m := range Methods {
		if m == method {
			return m, nil
		}
	}
	return "", fmt.Errorf("method %q: must be one of %s (aliases: cut = shb-hand, warmup = adam-warmup)",
		method, strings.Join(Methods, ", "))
}

// Scheduler returns the schedule.New name of a method (or alias): cut for
// shb-hand, warmup for adam-warmup and the Schedule-Free methods, constant
// for prodigy, dadapt-sgd and dog, the method itself otherwise.
func Scheduler(method string) (string, error) {
	m, err := Canonical(method)
	if err != nil {
		return "", err
	}
	if s, ok := schedulerOf[m]; ok {
		return s, nil
	}
	return m, nil
}

// Settings are the scheduler settings of a logged run.
type Settings struct {
	Method string          // a name of Methods
	Config schedule.Config // the resolved configuration; its LR0s are the run's α_0
	Format string          // "run.json" (salsa train) or "meta.json" (a conformance trace's)
}

// ReadSettings reads a run's settings from a run.json written by salsa
// train (see [DecodeRunJSON]) or a conformance meta.json, whose recorded
// outcomes are not required (see [trace.DecodeMetaSettings] and
// [FromStatopt]). The format is told by the top-level keys: plan, or config.
func ReadSettings(path string) (Settings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Settings{}, fmt.Errorf("not a JSON object: %w", err)
	}
	_, isRun := raw["plan"]
	_, isMeta := raw["config"]
	switch {
	case isRun && !isMeta:
		return DecodeRunJSON(bytes.NewReader(b))
	case isMeta && !isRun:
		m, err := trace.DecodeMetaSettings(bytes.NewReader(b))
		if err != nil {
			return Settings{}, err
		}
		method, cfg, err := FromStatopt(&m.Config)
		if err != nil {
			return Settings{}, err
		}
		return Settings{Method: method, Config: cfg, Format: "meta.json"}, nil
	}
	return Settings{}, fmt.Errorf("has neither a plan key (a run.json of salsa train) nor a config key (a conformance meta.json)")
}

// DecodeRunJSON reads the settings of a run.json written by salsa train:
// plan.options.method (train's name) and plan.schedule, the resolved
// schedule.Config, which holds α_0 (options.lr0, possibly --set) and every
// other setting. plan.scheduler must be the method's scheduler. Unknown
// fields of plan.schedule are errors, so that a setting is never dropped.
func DecodeRunJSON(r io.Reader) (Settings, error) {
	var doc struct {
		Plan *struct {
			Options *struct {
				Method *string `json:"method"`
			} `json:"options"`
			Scheduler *string          `json:"scheduler"`
			Schedule  *json.RawMessage `json:"schedule"`
		} `json:"plan"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return Settings{}, fmt.Errorf("run.json: %w", err)
	}
	p := doc.Plan
	var missing []string
	switch {
	case p == nil:
		missing = append(missing, "plan")
	default:
		if p.Options == nil || p.Options.Method == nil {
			missing = append(missing, "plan.options.method")
		}
		if p.Scheduler == nil {
			missing = append(missing, "plan.scheduler")
		}
		if p.Schedule == nil {
			missing = append(missing, "plan.schedule")
		}
	}
	if len(missing) > 0 {
		return Settings{}, fmt.Errorf("run.json: missing key(s) %s", strings.Join(missing, ", "))
	}
	method, err := Canonical(*p.Options.Method)
	if err != nil {
		return Settings{}, fmt.Errorf("run.json: plan.options.method: %w", err)
	}
	if sched, _ := Scheduler(method); sched != *p.Scheduler {
		return Settings{}, fmt.Errorf("run.json: plan.scheduler = %q: method %s runs scheduler %q", *p.Scheduler, method, sched)
	}
	var cfg schedule.Config
	dec := json.NewDecoder(bytes.NewReader(*p.Schedule))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Settings{}, fmt.Errorf("run.json: plan.schedule: %w", err)
	}
	if _, err := schedule.Build(*p.Scheduler, cfg); err != nil {
		return Settings{}, fmt.Errorf("run.json: plan.schedule: %w", err)
	}
	return Settings{Method: method, Config: cfg, Format: "run.json"}, nil
}
