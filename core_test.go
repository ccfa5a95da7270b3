package salsa_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// TestCoreImportsNoFramework checks the rule for the core: its
// import graph holds the standard library, gonum and this module only. The
// GoMLX adapter and the CLI live in the separate module ./gomlx.
func TestCoreImportsNoFramework(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		if strings.HasPrefix(p, "github.com/salsaopt/salsa/gomlx") ||
			!(strings.HasPrefix(p, "github.com/salsaopt/salsa") || strings.HasPrefix(p, "gonum.org/v1/gonum/")) {
			t.Errorf("the core imports %s", p)
		}
	}
	if n < 5 {
		t.Fatalf("go list found only %d packages: %s", n, out)
	}
}

// TestREADMEEventColumns keeps the README's table of events.csv columns
// equal to what trace writes.
func TestREADMEEventColumns(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for k := schedule.KindTest; k <= schedule.KindValidation; k++ {
		row := fmt.Sprintf("| `%s` | %s |", k, strings.Join(trace.EventColumns(k), ", "))
		if !strings.Contains(string(b), row+"\n") {
			t.Errorf("README.md lacks the row %q", row)
		}
	}
}
