// Command salsa trains models without learning-rate tuning (SALSA and the
// paper's baselines), replays the statistics of logged runs, and plots them.
//
//	salsa train  --dataset mnist --model logreg --method salsa --out DIR
//	salsa replay --trace RUN.trace.csv.gz --config RUN.meta.json
//	salsa plot   --run DIR | --runs A,B,...
//
// Run "salsa help COMMAND" for the flags of a command.
package main

import (
	"os"

	"github.com/salsaopt/salsa/gomlx/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
