package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEval: salsa eval repeats a run's final test loss with the run's own
// --test-limit, evaluates the whole test set with --test-limit 0, and
// refuses bad flags with a usage error naming them.
func TestEval(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	code, out, errs := run(t, peerArgs("shb-hand", dir, "--epochs", "1", "--lr0", "0.1")...)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	final := regexp.MustCompile(`test_loss=(\d+\.\d{4})`).FindStringSubmatch(out)
	line := regexp.MustCompile(`^eval: steps=16 epochs=1 test_loss=(\d+\.\d{6}) test_acc=0\.\d{4} test_n=(\d+)\n$`)
	code, got, errs := run(t, "eval", "--run", dir)
	m := line.FindStringSubmatch(got)
	if code != 0 || m == nil || final == nil || m[2] != "1000" || !strings.HasPrefix(m[1], final[1][:len(final[1])-1]) {
		t.Fatalf("eval: exit %d, stdout %q (train's %q), stderr %s", code, got, out, errs)
	}
	code, got, errs = run(t, "eval", "--run", dir, "--test-limit", "0")
	if m = line.FindStringSubmatch(got); code != 0 || m == nil || m[2] != "10000" {
		t.Errorf("eval --test-limit 0: exit %d, stdout %q, stderr %s", code, got, errs)
	}
	// A run that compare marked failed is evaluated, with a note.
	if err := os.WriteFile(filepath.Join(dir, "failed.txt"), []byte("step 17: NaN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, got, errs = run(t, "eval", "--run", dir); code != 0 || line.FindStringSubmatch(got) == nil || !strings.Contains(errs, "failed.txt: the run stopped with an error after its last checkpoint (epoch 1, step 16)") {
		t.Errorf("eval of a failed run: exit %d, stdout %q, stderr %q", code, got, errs)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval"}, 2, "--run is required"},
		{[]string{"eval", "--run", dir, "--test-limit", "-2"}, 1, "--test-limit -2: must be ≥ 0, or -1"},
		{[]string{"eval", "--run", dir + "/none"}, 1, "checkpoint.gob: no such file"},
	} {
		if code, _, errs := run(t, c.args...); code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
