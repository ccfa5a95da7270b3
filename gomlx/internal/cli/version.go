package cli

import (
	"fmt"
	"io"
	"sort"

	"github.com/salsaopt/salsa/gomlx/internal/train"
)

func init() {
	commands["version"] = command{"print the versions of salsa, Go and GoMLX, and the build flags", runVersion}
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salsa version\n\nPrints the versions of salsa, Go and GoMLX, one per line, and whether the build has GoMLX's SIMD kernels.")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	v := train.Versions()
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s %s\n", k, v[k])
	}
	fmt.Fprintf(stdout, "simd %v\n", simdBuild)
	return nil
}
