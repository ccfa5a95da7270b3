package cli

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/salsaopt/salsa/gomlx/internal/train"
)

func init() {
	commands["bench"] = command{"time plain, SASA+ and SSLS steps side by side and print the ratios", runBench}
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	model := fs.String("model", "logreg", "model: logreg or mlp")
	engines := fs.String("engines", "native,gomlx", "comma-separated engines")
	batch := fs.Int("batch", 128, "mini-batch size")
	rounds := fs.Int("rounds", 7, "interleaved rounds (the median is reported)")
	steps := fs.Int("steps", 100, "steps per round and kind")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rounds < 1 || *steps < 1 {
		return fmt.Errorf("--rounds %d, --steps %d: must be ≥ 1", *rounds, *steps)
	}
	// MNIST-shaped random data: 60000 examples of 784 features, 10 classes.
	const n, dim = 60000, 784
	r := rand.New(rand.NewPCG(3, 4))
	sp := &train.Split{X: make([]float32, n*dim), Y: make([]int32, n), Dim: dim, Labels: 10}
	for i := range sp.X {
		sp.X[i] = float32(r.NormFloat64())
	}
	for i := range sp.Y {
		sp.Y[i] = int32(r.IntN(10))
	}
	p, err := train.NewPlan(train.Options{Dataset: "mnist", Model: *model, Method: "salsa", Preset: "paper",
		LR0: 0.01, Epochs: 1, Batch: *batch, Seed: 1, Engine: "auto"}, n)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range strings.Split(*engines, ",") {
		if e = strings.TrimSpace(e); e == "native" && *model != "logreg" {
			continue
		} else if e != "" {
			names = append(names, e)
		}
	}
	fmt.Fprintf(stdout, "%s, batch %d, MNIST-shaped random data; median of %d interleaved rounds of %d steps\n\n", *model, *batch, *rounds, *steps)
	_, err = train.Bench(names, p, sp, *rounds, *steps, stdout)
	return err
}
