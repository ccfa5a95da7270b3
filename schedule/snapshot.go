package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SnapshotVersion is the version written by MarshalBinary. UnmarshalBinary
// accepts this version only, and says so otherwise.
const SnapshotVersion = 1

type envelope struct {
	Version int             `json:"version"`
	Name    string          `json:"name"`
	Config  json.RawMessage `json:"config"`
	State   json.RawMessage `json:"state"`
}

func marshalSnapshot(name string, cfg, state any) ([]byte, error) {
	c, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("schedule: snapshot of %s: %w", name, err)
	}
	st, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("schedule: snapshot of %s: %w", name, err)
	}
	return json.Marshal(envelope{Version: SnapshotVersion, Name: name, Config: c, State: st})
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func readEnvelope(data []byte) (envelope, error) {
	var e envelope
	if err := decodeStrict(data, &e); err != nil {
		return e, fmt.Errorf("schedule: snapshot: %w", err)
	}
	if e.Version != SnapshotVersion {
		return e, fmt.Errorf("schedule: snapshot version = %d: this build reads version %d", e.Version, SnapshotVersion)
	}
	return e, nil
}

func unmarshalSnapshot(data []byte, name string, cfg, state any) error {
	e, err := readEnvelope(data)
	if err != nil {
		return err
	}
	if e.Name != name {
		return fmt.Errorf("schedule: snapshot of %q cannot restore a %q scheduler", e.Name, name)
	}
	if err := decodeStrict(e.Config, cfg); err != nil {
		return fmt.Errorf("schedule: snapshot of %s: config: %w", name, err)
	}
	if err := decodeStrict(e.State, state); err != nil {
		return fmt.Errorf("schedule: snapshot of %s: state: %w", name, err)
	}
	return nil
}

// restore is the shape every UnmarshalBinary of a scheduler with a
// constructor and a state setter shares: it decodes the snapshot of name,
// builds the scheduler anew from its configuration (so a snapshot's
// configuration is checked as a new one is) and puts the state in (checked
// by set). The caller keeps its own options and copies the result in.
func restore[C, S, T any](data []byte, name string, build func(C, ...Option) (T, error), set func(T, S) error) (T, error) {
	var cfg C
	var st S
	var zero T
	if err := unmarshalSnapshot(data, name, &cfg, &st); err != nil {
		return zero, err
	}
	n, err := build(cfg)
	if err != nil {
		return zero, err
	}
	if err := set(n, st); err != nil {
		return zero, err
	}
	return n, nil
}

// Restore rebuilds any scheduler of this package from its snapshot.
func Restore(data []byte, opts ...Option) (Scheduler, error) {
	e, err := readEnvelope(data)
	if err != nil {
		return nil, err
	}
	var s Scheduler
	switch e.Name {
	case "constant":
		s = &Constant{}
	case "cut":
		s = &Cut{}
	case "warmup":
		s = &Warmup{}
	case "sasa+":
		s = &SASAPlus{}
	case "sasa":
		s = &SASA{}
	case "slope":
		s = &Slope{}
	case "ssls":
		s = &SSLS{}
	case "salsa":
		s = &SALSA{}
	case "validation":
		s = &WithValidation{}
	case "cosine":
		s = &Cosine{}
	case "wsd":
		s = &WSD{}
	case "plateau":
		s = &Plateau{}
	case "tail":
		s = &Tail{}
	default:
		return nil, fmt.Errorf("schedule: snapshot of unknown scheduler %q", e.Name)
	}
	if err := s.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if o, ok := s.(interface{ setOptions(options) }); ok {
		o.setOptions(buildOptions(opts))
	}
	return s, nil
}
