package schedule

import (
	"encoding/json"
	"testing"
)

// ls_dir is written by name; files holding 0 or 1 still read.
func TestAlongJSON(t *testing.T) {
	for _, c := range []struct {
		a    Along
		name string
		num  string
	}{{AlongG, `"g"`, "0"}, {AlongD, `"d"`, "1"}} {
		if b, err := json.Marshal(c.a); err != nil || string(b) != c.name {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.a, b, err, c.name)
		}
		for _, in := range []string{c.name, c.num} {
			var a Along
			if err := json.Unmarshal([]byte(in), &a); err != nil || a != c.a {
				t.Errorf("Unmarshal(%s) = %v, %v; want %v", in, a, err, c.a)
			}
		}
	}
	var a Along
	if err := json.Unmarshal([]byte(`"x"`), &a); err == nil {
		t.Error(`Unmarshal("x"): want an error`)
	}
	if _, err := json.Marshal(Along(5)); err == nil {
		t.Error("Marshal(5): want an error")
	}
}
