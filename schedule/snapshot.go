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
