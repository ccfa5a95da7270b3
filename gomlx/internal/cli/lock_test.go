//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOutLocked: while another process holds --out's lock (here the test,
// through a second open of the file), salsa compare and salsa train refuse
// to write there, naming the directory and the holder; once it lets go,
// the same command runs.
func TestOutLocked(t *testing.T) {
	out := t.TempDir()
	dir := filepath.Join(out, "runs", "x")
	for _, c := range []struct {
		dir  string
		args []string
	}{
		{out, compareArgs(out, "--methods", "salsa", "--epochs", "1", "--max-steps", "2")},
		{dir, append([]string{"train", "--out", dir, "--epochs", "1", "--max-steps", "2", "--no-plots"}, quick...)},
	} {
		unlock, err := lockDir("out", c.dir)
		if err != nil {
			t.Fatal(err)
		}
		want := "--out " + c.dir + ": another salsa process (pid " + strconv.Itoa(os.Getpid()) + ") is writing there (it holds " + filepath.Join(c.dir, lockFile) + ")"
		if code, _, stderr := run(t, c.args...); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s with the lock held: exit %d, stderr %q; want %q", c.args[0], code, stderr, want)
		}
		unlock()
		if code, _, stderr := run(t, c.args...); code != 0 {
			t.Errorf("%s after the lock was released: exit %d: %s", c.args[0], code, stderr)
		}
	}
	// salsa train --resume while the holder is writing the checkpoint: the
	// lock's error, not the half-written checkpoint's
	unlock, err := lockDir("out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.gob"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "--out " + dir + ": another salsa process"
	if code, _, stderr := run(t, "train", "--resume", "--out", dir); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("train --resume with the lock held: exit %d, stderr %q; want %q", code, stderr, want)
	}
	unlock()
	// --resume into no directory makes none
	none := filepath.Join(out, "none")
	if code, _, stderr := run(t, "train", "--resume", "--out", none); code != 1 || !strings.Contains(stderr, "--resume") {
		t.Errorf("train --resume into no directory: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("train --resume into no directory made %s (stat: %v)", none, err)
	}
}
