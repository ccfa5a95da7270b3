package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"

	"github.com/salsaopt/salsa/data"
)

// Split is a set of examples as flat float32 features and int32 labels, or
// the tokens of a text for a language model.
type Split struct {
	X      []float32 // N×Dim, each example H×W×C (channel last) when H > 0
	Y      []int32
	Dim    int
	Labels int // classes, or a text's vocabulary size
	// H, W, C are the image shape of an example for convolutional models;
	// 0 for flat features.
	H, W, C int
	// Fill is the per-channel value of a padded (black) pixel, for the
	// random-crop augmentation.
	Fill []float32
	// Tokens are a text's token ids (X and Y are empty).
	Tokens []int
}

// N is the number of examples, or of tokens.
func (s *Split) N() int {
	if s.Tokens != nil {
		return len(s.Tokens)
	}
	return len(s.Y)
}

// Source is a loaded dataset: images with labels, or a text.
type Source struct {
	Images *data.Dataset
	Text   *data.Corpus
}

// NTrain is the number of training examples, or of training tokens.
func (s *Source) NTrain() int {
	if s.Text != nil {
		return len(s.Text.Train)
	}
	return s.Images.TrainX.N
}

// Files are the path, size and SHA-256 of each file the dataset was read
// from, in the order read; nil for synthetic data.
func (s *Source) Files() []data.FileDigest {
	switch {
	case s.Text != nil:
		return s.Text.Files
	case s.Images != nil:
		return s.Images.Files
	}
	return nil
}

// Load reads a dataset from the --data folder, SALSA_DATA or the
// repository's copy (data.Resolve). With download, missing files are fetched
// from mirror (the dataset's default mirror when empty) into that folder, or
// into ./data/<name> when none exists, and verified by SHA-256.
// cifar10-synthetic is random data of CIFAR-10's shape, made from seed.
func Load(ctx context.Context, dataDir, name string, download bool, mirror string, seed uint64, stderr io.Writer) (*Source, error) {
	if name == "cifar10-synthetic" {
		return &Source{Images: data.SyntheticCIFAR10(seed)}, nil
	}
	// The folder of each dataset under a data root.
	folder := map[string]string{"mnist": data.MNIST, "fashion-mnist": data.FashionMNIST, "cifar10": data.CIFAR10,
		"tinyshakespeare": data.TinyShakespeare, "wikitext2": data.WikiText2}[name]
	if folder == "" {
		return nil, fmt.Errorf("--dataset %s: unknown", name)
	}
	dir, err := data.Resolve(dataDir, folder)
	if err != nil && !download {
		return nil, err
	}
	if err != nil {
		dir = filepath.Join("data", folder)
	}
	if download {
		fmt.Fprintf(stderr, "checking %s in %s, downloading what is missing (verified by SHA-256)\n", name, dir)
		if err := data.Download(ctx, nil, mirror, dir, folder); err != nil {
			return nil, err
		}
	}
	var src Source
	switch name {
	case "mnist":
		src.Images, err = data.LoadMNIST(dir)
	case "fashion-mnist":
		src.Images, err = data.LoadFashionMNIST(dir)
	case "cifar10":
		src.Images, err = data.LoadCIFAR10(dir)
	case "tinyshakespeare":
		src.Text, err = data.LoadTinyShakespeare(dir)
	case "wikitext2":
		src.Text, err = data.LoadWikiText2(dir)
	default:
		return nil, fmt.Errorf("--dataset %s: unknown", name)
	}
	if err != nil {
		return nil, err
	}
	return &src, nil
}

func imageSplit(im *data.Images, y data.Labels, ds *data.Dataset, hwc bool) (*Split, error) {
	s := &Split{Dim: im.Dim(), Labels: ds.Classes, Y: make([]int32, len(y))}
	var err error
	if hwc {
		s.X, err = im.Float32HWC(ds.Mean, ds.Std)
		s.H, s.W, s.C = im.Rows, im.Cols, im.Channels
		s.Fill = data.BlackFill(ds.Mean, ds.Std)
	} else {
		s.X, err = im.Float32(ds.Mean, ds.Std)
	}
	if err != nil {
		return nil, err
	}
	for i, v := range y {
		s.Y[i] = int32(v)
	}
	return s, nil
}

// Splits returns the training, validation and test splits. For images the
// validation split is nil unless the plan holds one out (the last NVal
// training examples); convolutional models get images channel last. For a
// text, the validation and test splits are the text's (Test is nil when the
// text has none). With --limit, the training split is the first NTrain (+
// NVal) examples or tokens.
func Splits(src *Source, p *Plan) (train, val, test *Split, err error) {
	if src.Text != nil {
		c := src.Text
		v := len(c.Vocab)
		train = &Split{Tokens: c.Train[:p.NTrain], Labels: v}
		if len(c.Valid) > 0 { // --test-limit makes each epoch's validation cheaper too
			ts, err := limit(c.Valid, p.Options.TestLimit, "validation")
			if err != nil {
				return nil, nil, nil, err
			}
			val = &Split{Tokens: ts, Labels: v}
		}
		if len(c.Test) > 0 {
			ts, err := limit(c.Test, p.Options.TestLimit, "test")
			if err != nil {
				return nil, nil, nil, err
			}
			test = &Split{Tokens: ts, Labels: v}
			p.NTest = len(test.Tokens)
		}
		return train, val, test, nil
	}
	m, _ := Model(p.Options.Model)
	ds := src.Images
	all, err := imageSplit(ds.TrainX, ds.TrainY, ds, m.Conv)
	if err != nil {
		return nil, nil, nil, err
	}
	if test, err = imageSplit(ds.TestX, ds.TestY, ds, m.Conv); err != nil {
		return nil, nil, nil, err
	}
	if n := p.Options.TestLimit; n > test.N() {
		return nil, nil, nil, beyondSplit("--test-limit", n, "test", test.N(), "examples")
	} else if n > 0 { // --test-limit
		test.X, test.Y = test.X[:n*test.Dim], test.Y[:n]
	}
	p.NTest = test.N()
	if n := p.NTrain + p.NVal; n < all.N() { // --limit
		all.X, all.Y = all.X[:n*all.Dim], all.Y[:n]
	}
	train = all
	if p.NVal > 0 {
		n, d := p.NTrain, all.Dim
		train, val = &Split{}, &Split{}
		*train, *val = *all, *all
		train.X, train.Y = all.X[:n*d], all.Y[:n]
		val.X, val.Y = all.X[n*d:], all.Y[n:]
	}
	return train, val, test, nil
}

// limit returns the first n tokens of t (split names it for --test-limit),
// or all of them when n is 0; n beyond its end is an error.
func limit(t []int, n int, split string) ([]int, error) {
	if n > len(t) {
		return nil, beyondSplit("--test-limit", n, split, len(t), "tokens")
	}
	if n > 0 {
		return t[:n], nil
	}
	return t, nil
}

// Perm is the order of the training examples in epoch e (1-based): a fresh
// shuffle from the seed, the same whenever the run is resumed.
func Perm(seed uint64, epoch, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(epoch))).Perm(n)
}

// beyondSplit is the error of a --limit or --test-limit of n beyond the
// split's size (in unit: examples or tokens).
func beyondSplit(flag string, n int, split string, size int, unit string) error {
	return fmt.Errorf("%s %d: the %s split has %d %s: give at most that, or 0 for all", flag, n, split, size, unit)
}
