package stats

import (
	"encoding/json"
	"testing"
)

// run.json and snapshots name the estimator; files holding the number still
// read.
func TestVarianceMethodJSON(t *testing.T) {
	for _, m := range []VarianceMethod{IID, BM, OLBM} {
		b, err := json.Marshal(m)
		if err != nil || string(b) != `"`+m.String()+`"` {
			t.Errorf("Marshal(%v) = %s, %v; want %q", m, b, err, m.String())
		}
		var back VarianceMethod
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("Unmarshal(%s) = %v, %v", b, back, err)
		}
		if err := json.Unmarshal([]byte{byte('0' + int(m))}, &back); err != nil || back != m {
			t.Errorf("Unmarshal(%d) = %v, %v", int(m), back, err)
		}
	}
	var m VarianceMethod
	for _, bad := range []string{`"mb"`, `0`, `4`, `true`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", bad, m)
		}
	}
	if _, err := json.Marshal(VarianceMethod(7)); err == nil {
		t.Error("Marshal(7): want an error")
	}
}
