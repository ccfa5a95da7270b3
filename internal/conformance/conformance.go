// Package conformance locates the reference traces of statopt 0.2 for the
// tests: ../shared/conformance/public beside the repository.
package conformance

import (
	"os"
	"path/filepath"
	"testing"
)

// PublicDir returns shared/conformance/public, found beside the first
// ancestor of the working directory that has it, or skips tb.
func PublicDir(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		tb.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "..", "shared", "conformance", "public")
		if _, err := os.Stat(filepath.Join(p, "manifest.csv")); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("conformance traces not found: expected ../shared/conformance/public (with manifest.csv) beside the repository")
		}
		dir = parent
	}
}
