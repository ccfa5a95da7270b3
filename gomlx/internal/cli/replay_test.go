package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

// TestReplayReproducesTraces runs the command on public traces of each kind
// (SALSA, SASA+ with forced BM, OLBM) and compares its output with the
// recorded events: same rows, floats within 1e-9 relative.
func TestReplayReproducesTraces(t *testing.T) {
	dir := conformance.PublicDir(t)
	for _, r := range []string{"logreg_salsa_lr1e-1", "lsq_sasa_bm_forced", "mlp_sasa_olbm", "mlp_salsa_lr1e-3_wd1e-4"} {
		code, out, errs := run(t, "replay", "--trace", filepath.Join(dir, r+".trace.csv.gz"), "--config", filepath.Join(dir, r+".meta.json"))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", r, code, errs)
		}
		want, err := os.ReadFile(filepath.Join(dir, r+".events.csv"))
		if err != nil {
			t.Fatal(err)
		}
		got, wl := strings.Split(out, "\n"), strings.Split(string(want), "\n")
		if len(got) != len(wl) || got[0] != wl[0] {
			t.Fatalf("%s: %d lines (header %q), want %d (%q)", r, len(got), got[0], len(wl), wl[0])
		}
		for i := range got {
			g, w := strings.Split(got[i], ","), strings.Split(wl[i], ",")
			if len(g) != len(w) {
				t.Fatalf("%s line %d: %q, want %q", r, i+1, got[i], wl[i])
			}
			for j := range g {
				if g[j] == w[j] {
					continue
				}
				a, b := parseF(g[j]), parseF(w[j])
				scale := math.Max(math.Abs(a), math.Abs(b))
				if (j == 3 || j == 4) && w[1] == "test" { // lower, upper: on the scale of the half-width (see replay's conformance test)
					scale = math.Max(scale, (parseF(w[4])-parseF(w[3]))/2)
				}
				if strings.Contains(w[j], ".") && math.Abs(a-b) <= 1e-9*scale {
					continue
				}
				t.Fatalf("%s line %d column %d: %q, want %q", r, i+1, j+1, got[i], wl[i])
			}
		}
	}
}

func parseF(s string) float64 {
	evs, err := trace.ReadEvents(strings.NewReader(trace.EventsHeader + "\n1,drop," + s + "\n"))
	if err != nil || len(evs) != 1 {
		return math.NaN()
	}
	return evs[0].NewLR
}

// TestReplayOtherSettings replays a SASA+ trace under other settings, the
// user feature: BM variance without statopt's stabilizers decides otherwise.
func TestReplayOtherSettings(t *testing.T) {
	dir := conformance.PublicDir(t)
	r := filepath.Join(dir, "lsq_sasa_mb")
	code, out, errs := run(t, "replay", "--trace", r+".trace.csv.gz", "--config", r+".meta.json", "--set", "variance=bm", "--set", "sign_check=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	evs, err := trace.ReadEvents(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for _, e := range evs {
		if e.Kind == schedule.KindDrop {
			drops++
		}
		if e.Kind == schedule.KindTest && e.Dof > 100 {
			t.Fatalf("step %d: dof %d: BM's dof is floor(√N)−1", e.Step, e.Dof)
		}
	}
	if drops == 0 || !strings.Contains(errs, "departs from the logged one") {
		t.Errorf("%d drops; stderr %q", drops, errs)
	}
	// Without --config: the paper's defaults from --n and --batch.
	code, out, errs = run(t, "replay", "--trace", r+".trace.csv.gz", "--method", "sasa+", "--n", "2000", "--batch", "20")
	if code != 0 || !strings.HasPrefix(out, trace.EventsHeader+"\n") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestReplayErrors(t *testing.T) {
	dir := conformance.PublicDir(t)
	r := filepath.Join(dir, "lsq_sasa_mb")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay"}, 2, "--trace is required"},
		{[]string{"replay", "--trace", "/nonexistent.csv"}, 1, "/nonexistent.csv"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "theta=2"}, 1, "SASAPlusConfig.Theta = 2: must be in (0, 1]"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "bogus=1"}, 1, "--set bogus: unknown key"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--set", "nmin=x"}, 1, "--set nmin=x: not an integer"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz"}, 1, "--n and --batch are required"},
		{[]string{"replay", "--trace", r + ".trace.csv.gz", "--config", r + ".meta.json", "--method", "nope"}, 1, `method "nope"`},
		{[]string{"replay", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", c.args, code, errs, c.code, c.want)
		}
	}
}
