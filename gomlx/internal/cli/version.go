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
