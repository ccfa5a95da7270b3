package cli

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/salsaopt/salsa/gomlx/internal/train"
)

func init() {
	commands["bench"] = command{"time plain, SASA+ and SSLS steps side by side and print the ratios", runBench}
}

// benchShape is the shape of a dataset's examples for random bench data:
// images H×W×C with classes, or a text's vocabulary.
// maxBenchBatch bounds bench's --batch: its 10 batches of CIFAR-10's shape
// then take 1 GB.
const maxBenchBatch = 8192

func benchShape(dataset string) (h, w, c, classes int, err error) {
	switch dataset {
	case "mnist", "fashion-mnist":
		return 28, 28, 1, 10, nil
	case "cifar10", "cifar10-synthetic":
		return 32, 32, 3, 10, nil
	case "tinyshakespeare":
		return 0, 0, 0, 65, nil
	case "wikitext2":
		return 0, 0, 0, 33278, nil
	}
	return 0, 0, 0, 0, fmt.Errorf("--dataset %s: must be one of %s", dataset, strings.Join(train.Datasets, ", "))
}

// benchSplit makes p.NTrain random examples of the dataset's shape for the
// model (flat for logreg and mlp), or a text of p.NTrain tokens.
func benchSplit(p *train.Plan, h, w, c, classes int) *train.Split {
	r := rand.New(rand.NewPCG(3, 4))
	m, _ := train.Model(p.Options.Model)
	if m.Text {
		toks := make([]int, p.NTrain)
		for i := range toks {
			toks[i] = r.IntN(classes)
		}
		return &train.Split{Tokens: toks, Labels: classes}
	}
	n, dim := p.NTrain, h*w*c
	sp := &train.Split{X: make([]float32, n*dim), Y: make([]int32, n), Dim: dim, Labels: classes}
	if m.Conv {
		sp.H, sp.W, sp.C, sp.Fill = h, w, c, make([]float32, c)
	}
	for i := range sp.X {
		sp.X[i] = float32(r.NormFloat64())
	}
	for i := range sp.Y {
		sp.Y[i] = int32(r.IntN(classes))
	}
	return sp
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	dataset := fs.String("dataset", "mnist", "dataset whose shape the random data takes: "+strings.Join(train.Datasets, ", "))
	model := fs.String("model", "logreg", "model: "+strings.Join(modelNames(), ", "))
	engines := fs.String("engines", "", "comma-separated engines: native (logreg only) and gomlx (default: native,gomlx for logreg, else gomlx)")
	batch := fs.Int("batch", 0, "mini-batch size (0: the model's default)")
	rounds := fs.Int("rounds", 7, "interleaved rounds (the median is reported)")
	steps := fs.Int("steps", 100, "steps per round and kind")
	setUsage(fs, "usage: salsa bench [--dataset D] [--model M] [--batch B] [--engines gomlx,native] [--steps N] [--rounds R]\n"+
		"\nTimes plain, SASA+ and SSLS steps on random data of the dataset's shape, in interleaved rounds,\n"+
		"and prints each kind's median time and its ratio to the plain step.")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rounds < 1 || *steps < 1 {
		return fmt.Errorf("--rounds %d, --steps %d: must be ≥ 1", *rounds, *steps)
	}
	if *batch > maxBenchBatch {
		return fmt.Errorf("--batch %d: must be in [1, %d] (or 0 for the model's default): bench holds 10 batches of random data in memory", *batch, maxBenchBatch)
	}
	h, w, c, classes, err := benchShape(*dataset)
	if err != nil {
		return err
	}
	o := train.Options{Dataset: *dataset, Model: *model, Method: "salsa", Preset: "paper",
		LR0: 0.01, Epochs: 1, Batch: *batch, Seed: 1, Engine: "auto"}
	if err := o.Validate(); err != nil {
		return err
	}
	mi, _ := train.Model(*model)
	if o.Batch == 0 {
		o.Batch = mi.Batch
	}
	// 10 batches of images, or a text of 40 chunks.
	n := 10 * o.Batch
	if mi.Text {
		n = o.Batch * (40*mi.BPTT + 1)
	}
	p, err := train.NewPlan(o, n)
	if err != nil {
		return err
	}
	if *engines == "" {
		*engines = "gomlx"
		if *model == "logreg" {
			*engines = "native,gomlx"
		}
	}
	names, err := benchEngines(*engines, *model)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s, batch %d, random data of %s's shape; median of %d interleaved rounds of %d steps\n\n",
		*model, o.Batch, *dataset, *rounds, *steps)
	_, err = train.Bench(names, p, benchSplit(p, h, w, c, classes), *rounds, *steps, stdout)
	return err
}

// benchEngines parses --engines: each name once, each a registered engine
// that can run the model (native runs logreg only), at least one.
func benchEngines(list, model string) ([]string, error) {
	var valid, runs []string // registered; those that can run the model
	for e := range train.Engines {
		valid = append(valid, e)
		if e != "native" || model == "logreg" {
			runs = append(runs, e)
		}
	}
	slices.Sort(valid)
	slices.Sort(runs)
	var names []string
	for _, e := range strings.Split(list, ",") {
		switch e = strings.TrimSpace(e); {
		case e == "":
		case train.Engines[e] == nil:
			return nil, fmt.Errorf("--engines %s: unknown engine %q: must be one of %s", list, e, strings.Join(valid, ", "))
		case !slices.Contains(runs, e):
			return nil, fmt.Errorf("--engines %s: the %s engine cannot run --model %s (it runs logreg only): use --engines %s",
				list, e, model, strings.Join(runs, ","))
		case slices.Contains(names, e):
			return nil, fmt.Errorf("--engines %s: engine %q is named twice", list, e)
		default:
			names = append(names, e)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("--engines %q: name at least one engine: %s for --model %s", list, strings.Join(runs, ", "), model)
	}
	return names, nil
}

func modelNames() []string {
	var s []string
	for _, m := range train.Models {
		s = append(s, m.Name)
	}
	return s
}
