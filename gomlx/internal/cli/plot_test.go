package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePlotRun writes a small constant-rate run directory: a plain-text
// trace (the reader detects gzip by its magic bytes) and three epochs.
func writePlotRun(t *testing.T, dir string) {
	t.Helper()
	var steps strings.Builder
	steps.WriteString("step,lr,loss,x1d,d2,eta\n")
	for k := 1; k <= 300; k++ {
		fmt.Fprintf(&steps, "%d,0.1,%v,%v,0.5,\n", k, 1/float64(k)+0.1*float64(k%7), 0.01*float64(k%5-2))
	}
	epochs := "epoch,steps,lr,train_loss,test_loss,test_acc,switched,drops,seconds\n" +
		"0,0,0.1,2.0,2.1,0.1,0,0,0\n1,100,0.1,0.5,0.6,0.8,0,0,1.5\n2,200,0.1,0.3,0.4,0.85,0,0,1.5\n3,300,0.1,0.25,0.38,0.87,0,0,1.5\n"
	for name, s := range map[string]string{"steps.csv.gz": steps.String(), "epochs.csv": epochs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlotCommand(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writePlotRun(t, a)
	writePlotRun(t, b)
	missing := filepath.Join(t.TempDir(), "missing-run")
	out := filepath.Join(t.TempDir(), "cmp")

	for _, c := range []struct {
		args     []string
		code     int
		stderr   string // a substring of stderr
		nOutputs int    // lines on stdout
	}{
		{[]string{"plot"}, 2, "give exactly one of --run and --runs", 0},
		{[]string{"plot", "--run", a, "--runs", b}, 2, "give exactly one of --run and --runs", 0},
		{[]string{"plot", "--runs", a + "," + b}, 2, "--runs needs --out", 0},
		{[]string{"plot", "--runs", a + ",", "--out", out}, 2, "empty directory name", 0},
		{[]string{"plot", "--runs", a + "," + a + "/", "--out", out}, 2, "is listed twice", 0},
		{[]string{"plot", "--bogus"}, 2, "flag provided but not defined", 0},
		{[]string{"plot", "--run", a, "extra"}, 2, `unexpected argument "extra"`, 0},
		{[]string{"plot", "--run", missing}, 1, missing + `" does not exist`, 0},
		{[]string{"plot", "--run", a}, 0, "stats: no stationarity test", 6}, // lr, loss, acc: a run without tests has no stats
		{[]string{"plot", "--runs", a + "," + b, "--out", out}, 0, "", 8},   // compare_lr, _loss, _test_loss, _acc
	} {
		code, stdout, stderr := run(t, c.args...)
		lines := strings.Fields(stdout)
		if code != c.code || !strings.Contains(stderr, c.stderr) || len(lines) != c.nOutputs {
			t.Errorf("salsa %q: exit %d, %d files, stderr %q; want exit %d, %d files, stderr with %q",
				c.args, code, len(lines), stderr, c.code, c.nOutputs, c.stderr)
		}
		for _, f := range lines {
			if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
				t.Errorf("salsa %q: output %s: %v", c.args, f, err)
			}
		}
	}
}
