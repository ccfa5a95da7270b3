//go:build !unix

package cli

import (
	"fmt"
	"os"
)

// lockDir creates dir if needed. Outside unix systems it takes no lock:
// two commands writing into one --out are not detected there (a resumed
// run still refuses logs shorter than its checkpoint says).
func lockDir(flag, dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, dir, err)
	}
	return func() {}, nil
}
