package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/replay"
)

// TestTrainMNISTResume trains MNIST logreg with SALSA for one epoch on the
// repository's copy of MNIST, uninterrupted and stopped at step 150 then
// resumed; the final lines (but the seconds) and the run files must agree.
func TestTrainMNISTResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	a, b := t.TempDir(), t.TempDir()
	code, outA, errs := run(t, "train", "--epochs", "1", "--out", a, "--no-plots")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	final := regexp.MustCompile(`^final: test_acc=(0\.\d{4}) test_loss=\d+\.\d{4} lr=\S+ epochs=1 seconds=\d+\.\d\n$`)
	m := final.FindStringSubmatch(outA)
	if m == nil {
		t.Fatalf("stdout %q does not end with the final line", outA)
	}
	if m[1] < "0.85" {
		t.Errorf("test_acc %s after one epoch", m[1])
	}
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	code, stop, errs := run(t, "train", "--epochs", "1", "--out", b, "--max-steps", "150", "--no-plots", "--cpuprofile", prof)
	if code != 0 || !strings.HasPrefix(stop, "stopped (--max-steps): steps=150") {
		t.Fatalf("exit %d: %q %s", code, stop, errs)
	}
	// --cpuprofile writes a pprof profile: gzip-compressed protocol buffers.
	if p, err := os.ReadFile(prof); err != nil || len(p) < 100 || p[0] != 0x1f || p[1] != 0x8b {
		t.Errorf("--cpuprofile: %d bytes, err %v; want a gzip-compressed profile", len(p), err)
	}
	code, _, errs = run(t, "train", "--out", b, "--no-plots")
	if code != 1 || !strings.Contains(errs, "pass --resume") {
		t.Errorf("rerun into a used --out: exit %d, %s", code, errs)
	}
	code, outB, errs := run(t, "train", "--resume", "--out", b, "--no-plots")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	cut := func(s string) string { return s[:strings.Index(s, " seconds=")] }
	if cut(outA) != cut(outB) {
		t.Errorf("resumed: %q\nuninterrupted: %q", outB, outA)
	}
	for _, f := range []string{"steps.csv.gz", "events.csv"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs after resuming", f)
		}
	}
}

// TestTrainDownload fetches MNIST through --download from a local server
// that serves the repository's copy, into an empty --data folder, then
// trains a few steps on it; a server serving a corrupt file is refused with
// the file named and nothing left behind.
func TestTrainDownload(t *testing.T) {
	src, err := filepath.Abs("../../../data/mnist")
	if err != nil {
		t.Fatal(err)
	}
	good := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer good.Close()
	root := t.TempDir()
	code, out, errs := run(t, "train", "--data", root, "--download", "--mirror", good.URL+"/", "--max-steps", "5",
		"--out", filepath.Join(root, "run"), "--no-plots")
	if code != 0 || !strings.HasPrefix(out, "stopped (--max-steps): steps=5") {
		t.Fatalf("exit %d: %q %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "mnist", "t10k-labels-idx1-ubyte.gz")); err != nil {
		t.Fatal(err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "t10k-labels") {
			w.Write([]byte("not the MNIST labels"))
			return
		}
		http.FileServer(http.Dir(src)).ServeHTTP(w, r)
	}))
	defer bad.Close()
	root2 := t.TempDir()
	code, _, errs = run(t, "train", "--data", root2, "--download", "--mirror", bad.URL+"/", "--out", filepath.Join(root2, "run"))
	if code != 1 || !strings.Contains(errs, "t10k-labels-idx1-ubyte.gz") {
		t.Fatalf("corrupt mirror: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(root2, "mnist", "t10k-labels-idx1-ubyte.gz")); err == nil {
		t.Error("the corrupt file was kept")
	}
}

func TestTrainFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"train"}, 2, "--out is required"},
		{[]string{"train", "--out", file, "--limit", "256", "--test-limit", "256", "--epochs", "1", "--no-plots"}, 1, "--out " + file + ": mkdir " + file + ": not a directory"},
		{[]string{"train", "--out", dir, "--method", "sgd"}, 1, "--method sgd: must be one of"},
		{[]string{"train", "--out", dir, "--lr0", "-1"}, 1, "--lr0 -1: must be finite and > 0"},
		// A value that does not parse: the flag, the value and what it takes.
		{[]string{"train", "--out", dir, "--epochs", "x"}, 2, `--epochs "x": must be an integer`},
		{[]string{"train", "--out", dir, "--seed", "-1"}, 2, `--seed "-1": must be an integer in [0, 18446744073709551615]`},
		{[]string{"train", "--out", dir, "--lr0", "fast"}, 2, `--lr0 "fast": must be a number`},
		{[]string{"train", "--out", dir, "--lr0", "1e999"}, 2, `--lr0 "1e999": must be a number (value out of range)`},
		{[]string{"train", "--out", dir, "--epochs", "99999999999999999999"}, 2, `--epochs "99999999999999999999": must be an integer in [-9223372036854775808, 9223372036854775807] (value out of range)`},
		{[]string{"train", "--out", dir, "--no-plots=maybe"}, 2, `--no-plots "maybe": must be true or false (1 or 0)`},
		{[]string{"compare", "--out", dir, "--seeds", "x"}, 2, "salsa compare: --seeds \"x\": must be an integer\nRun 'salsa help compare'"},
		{[]string{"train", "--out", dir, "--drops", "1,a"}, 2, `"a" is not an integer epoch`},
		// an empty item used to be skipped, and "," gave the default cuts
		{[]string{"train", "--out", dir, "--method", "shb-hand", "--drops", ","}, 2, `",": an empty item`},
		{[]string{"train", "--out", dir, "--method", "shb-hand", "--drops", "2,"}, 2, `"2,": an empty item`},
		{[]string{"train", "--out", dir, "--set", "theta"}, 2, `"theta": want key=value`},
		{[]string{"train", "--out", dir, "--set", "wd=0", "--set", "wd =1e-4"}, 2, `"wd =1e-4": wd given twice (0 before): give each key once`},
		{[]string{"train", "--out", dir, "--set", "tau=7"}, 1, "salsa train: --set tau=7: must be in (0, 1)\n"},
		{[]string{"train", "--out", dir, "--engine", "native", "--model", "mlp"}, 1, "--engine native: only --model logreg"},
		{[]string{"train", "--out", dir, "--max-steps", "-3"}, 1, "--max-steps -3: must be ≥ 0"},
		{[]string{"train", "--out", dir, "--mirror", "http://x"}, 1, "--mirror http://x: is used only with --download"},
		{[]string{"train", "--resume", "--out", filepath.Join(dir, "none")}, 1, "--resume"},
		{[]string{"train", "--out", dir, "--data", filepath.Join(dir, "nodata")}, 1, "nodata"},
		{[]string{"train", "--out", dir, "--max-steps", "1", "--cpuprofile", filepath.Join(dir, "no", "cpu.pprof")}, 1, "--cpuprofile " + filepath.Join(dir, "no", "cpu.pprof") + ": open"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Contains(errs, "parse error") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// A flag error is one line and a hint on stderr (not the whole usage);
// help goes to stdout; version names the modules and the build.
func TestUsageAndVersion(t *testing.T) {
	code, out, errs := run(t, "train", "--bogus")
	if code != 2 || out != "" || strings.Count(errs, "\n") != 2 || !strings.Contains(errs, "-bogus") ||
		!strings.Contains(errs, "salsa help train") {
		t.Errorf("bad flag: exit %d, stdout %q, stderr %q: want 2 lines naming the flag and the help", code, out, errs)
	}
	code, out, errs = run(t, "help", "train")
	if code != 0 || !strings.Contains(out, "usage: salsa train") || errs != "" {
		t.Errorf("help train: exit %d, stdout %d bytes, stderr %q", code, len(out), errs)
	}
	// every command's -h starts with its usage line
	for _, c := range []string{"train", "compare", "eval", "plot", "replay", "bench", "version"} {
		if code, out, _ = run(t, c, "-h"); code != 0 || !strings.HasPrefix(out, "usage: salsa "+c) {
			t.Errorf("%s -h: exit %d, stdout %.60q", c, code, out)
		}
	}
	// 'help help' is the usage; extra words are refused, not ignored
	if code, out, _ = run(t, "help", "help"); code != 0 || !strings.Contains(out, "commands:") {
		t.Errorf("help help: exit %d, %q", code, out)
	}
	if code, _, errs = run(t, "help", "train", "extra"); code != 2 || !strings.Contains(errs, `salsa help: "train extra": give one command`) {
		t.Errorf("help train extra: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ = run(t, args...)
		if code != 0 || !strings.Contains(out, "github.com/gomlx/gomlx ") || !strings.Contains(out, "simd ") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}

// --resume refuses flags that would change the run, accepts those equal to
// the run's, and --epochs N extends a finished run to exactly what an
// uninterrupted N-epoch run gives.
func TestResumeFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	a, b := t.TempDir(), t.TempDir()
	common := []string{"train", "--limit", "1280", "--no-plots", "--seed", "2"}
	code, full, errs := run(t, append(common, "--epochs", "2", "--out", a)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, errs = run(t, append(common, "--epochs", "1", "--out", b)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "sasa+"}, "--resume: --method sasa+ (the run has salsa)"},
		{[]string{"--lr0", "0.5", "--seed", "2"}, "--resume: --lr0 0.5 (the run has 0.01): a resumed run keeps its settings"},
		{[]string{"--set", "theta=0.5"}, "--set [[theta 0.5]] (the run has [])"},
		{[]string{"--limit", "640"}, "--limit 640 (the run has 1280)"},
	} {
		code, _, errs := run(t, append([]string{"train", "--resume", "--out", b}, c.args...)...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("--resume %v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
	code, ext, errs := run(t, "train", "--resume", "--out", b, "--epochs", "2", "--seed", "2", "--no-plots")
	if code != 0 || !strings.Contains(errs, "the run goes on to epoch 2 (it was set to 1)") {
		t.Fatalf("--resume --epochs 2: exit %d: %s", code, errs)
	}
	cut := func(s string) string { return s[:strings.Index(s, " seconds=")] }
	if cut(ext) != cut(full) {
		t.Errorf("extended: %q\nuninterrupted: %q", ext, full)
	}
	x, _ := os.ReadFile(filepath.Join(a, "steps.csv.gz"))
	y, _ := os.ReadFile(filepath.Join(b, "steps.csv.gz"))
	if !bytes.Equal(x, y) {
		t.Error("steps.csv.gz of the extended run differs from the uninterrupted one")
	}
	st, err := replay.ReadSettings(filepath.Join(b, "run.json"))
	if err != nil {
		t.Fatalf("run.json after --resume --epochs 2: %v", err)
	}
	var rj struct {
		Plan struct{ Options train.Options } `json:"plan"`
	}
	if b, err := os.ReadFile(filepath.Join(b, "run.json")); err != nil || json.Unmarshal(b, &rj) != nil || rj.Plan.Options.Epochs != 2 || st.Method != "salsa" {
		t.Errorf("run.json after --resume --epochs 2: epochs %d, method %q (%v)", rj.Plan.Options.Epochs, st.Method, err)
	}
	code, _, errs = run(t, "train", "--resume", "--out", b, "--epochs", "1")
	if code != 1 || !strings.Contains(errs, "has completed 2 epochs already (give ≥ 2)") {
		t.Errorf("--resume --epochs 1 after 2: exit %d, %q", code, errs)
	}
	// A CPU profile is not a setting of the run: a resumed run takes one.
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	if code, _, errs = run(t, "train", "--resume", "--out", b, "--epochs", "3", "--cpuprofile", prof, "--no-plots"); code != 0 {
		t.Errorf("--resume --cpuprofile: exit %d, %q", code, errs)
	} else if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("--resume --cpuprofile wrote no profile: %v", err)
	}
	// A run stopped before its first epoch: --epochs 0 is refused, and
	// run.json keeps its length.
	c := t.TempDir()
	if code, _, errs = run(t, append(common, "--epochs", "1", "--max-steps", "1", "--out", c)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs = run(t, "train", "--resume", "--out", c, "--epochs", "0")
	if code != 1 || !strings.Contains(errs, "has completed 0 epochs already (give ≥ 1)") {
		t.Errorf("--resume --epochs 0 before the first epoch: exit %d, %q", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(c, "run.json")); err != nil || json.Unmarshal(b, &rj) != nil || rj.Plan.Options.Epochs != 1 {
		t.Errorf("run.json after the refused --epochs 0: epochs %d (%v)", rj.Plan.Options.Epochs, err)
	}
}

// TestTrainFailedRun: a run that blows up leaves its error in failed.txt,
// as salsa compare's runs do; salsa plot names it and marks the figures; a
// run trained again in the directory that ends clean removes it.
func TestTrainFailedRun(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"train", "--out", dir, "--no-plots", "--epochs", "1", "--method", "shb-hand"}, quick...)
	code, _, errs := run(t, append(args, "--lr0", "1e38")...)
	if code == 0 || !strings.Contains(errs, "the training loss is NaN") {
		t.Fatalf("lr0 1e38: exit %d: %s", code, errs)
	}
	why, err := os.ReadFile(filepath.Join(dir, plots.FailedFile))
	if err != nil || !strings.Contains(string(why), "the training loss is NaN") || !strings.HasSuffix(string(why), "\n") {
		t.Errorf("failed.txt: %q, %v", why, err)
	}
	figs := t.TempDir()
	if code, _, errs := run(t, "plot", "--run", dir, "--out", figs); code != 0 ||
		!strings.Contains(errs, "salsa plot: note: the run stopped with an error (failed.txt): "+strings.TrimSpace(string(why))) {
		t.Errorf("plot: exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(filepath.Join(figs, "loss.svg"))
	if err != nil || !strings.Contains(string(svg), "(stopped with an error)") {
		t.Errorf("loss.svg: no mark of the error (%v)", err)
	}
	if code, _, errs := run(t, append(args, "--lr0", "0.1")...); code != 0 {
		t.Fatalf("lr0 0.1 in the same directory: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, plots.FailedFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed.txt after a run that ended clean: %v", err)
	}
}
