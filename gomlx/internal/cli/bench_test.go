package cli

import (
	"strings"
	"testing"
)

// bench refuses an engine that is unknown, named twice or unable to run the
// model, naming the flag, the value and the valid choices, and prints
// nothing on stdout: never an empty table with exit 0.
func TestBenchEngineErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", "mlp", "--engines", "native"}, []string{"--engines native:", "--model mlp", "use --engines gomlx"}},
		{[]string{"--model", "cnn", "--dataset", "cifar10", "--engines", "gomlx,native"}, []string{"--engines gomlx,native:", "--model cnn", "use --engines gomlx"}},
		{[]string{"--engines", "fast"}, []string{"--engines fast:", `unknown engine "fast"`, "must be one of gomlx, native"}},
		{[]string{"--model", "mlp", "--engines", "Native"}, []string{"--engines Native:", `"Native"`, "gomlx, native"}},
		{[]string{"--engines", " , "}, []string{`--engines " , "`, "name at least one engine: gomlx, native"}},
		{[]string{"--model", "mlp", "--engines", ","}, []string{"name at least one engine: gomlx for --model mlp"}},
		{[]string{"--engines", "native,native"}, []string{"--engines native,native:", `"native" is named twice`}},
		// a huge batch was an out-of-memory crash of the runtime
		{[]string{"--engines", "native", "--batch", "999999999"}, []string{"--batch 999999999: must be in [1, 8192]"}},
	} {
		code, out, errs := run(t, append([]string{"bench", "--rounds", "1", "--steps", "1"}, c.args...)...)
		if code != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit 1 and nothing on stdout", c.args, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errs, w)
			}
		}
	}
}

// A bench that runs prints one row per engine and kind.
func TestBenchNativeLogreg(t *testing.T) {
	code, out, errs := run(t, "bench", "--model", "logreg", "--engines", "native", "--rounds", "1", "--steps", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, k := range []string{"plain", "sasa+", "ssls"} {
		if !strings.Contains(out, "| native | "+k+" | ") || !strings.Contains(out, "engine=native kind="+k+" ") {
			t.Errorf("no %s row in %q", k, out)
		}
	}
}
