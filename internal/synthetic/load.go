// Package synthetic rebuilds the three synthetic problems of the conformance
// suite (lsq, logreg, mlp; see the conformance README, "Synthetic problems")
// in float64 and runs them end to end with a direction and a scheduler, the
// way statopt 0.2 drives its optimizers, so that a re-implementation can be
// compared with the recorded traces row by row.
//
// Parameters live in one flat vector that concatenates the tensors of the
// PyTorch model in parameter order (weight before bias, layer by layer; a
// Linear weight is out×in, row-major). Inner products, squared norms and the
// L2 term are formed per tensor and summed in that order, as statopt does.
// A loaded [Problem] is read-only: concurrent runs on it are safe.
//
// Agreement with the public traces (package tests, replaying each run's
// learning rates and drops, with SSLS line searches evaluated here): loss and
// ‖d‖² within 5e-14 relative and the final full objective within 5e-14 over
// all 20 000 steps of every SASA+ run and of lsq_salsa_lr1e-3. The SSLS phase
// of logreg_salsa_lr1e-1 and of the two mlp SALSA runs (lr ≈ 4…30) is
// chaotic: last-bit differences from PyTorch's kernels grow about tenfold
// every 50–65 steps, exceed 1e-9 near step 400–500 and make the trajectories
// unrelated by step ~900, so those runs can only be compared over a prefix.
package synthetic

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Tensor locates one parameter tensor inside the flat parameter vector.
type Tensor struct {
	Name   string // PyTorch parameter name, e.g. "0.weight"
	Shape  []int  // PyTorch shape; a Linear weight is out×in
	Offset int    // index of the first element in the flat vector
	Len    int    // number of elements
}

// spec is the architecture and mini-batch size of one problem, from the
// table of the conformance README ("Synthetic problems").
type spec struct {
	batch   int        // b
	classes int        // 0 for least squares
	tensors []tensorSp // expected parameter tensors, in parameter order
}

type tensorSp struct {
	name  string
	shape []int
}

var specs = map[string]spec{
	"lsq": {batch: 20, tensors: []tensorSp{
		{"weight", []int{1, 20}}, {"bias", []int{1}}}},
	"logreg": {batch: 30, classes: 3, tensors: []tensorSp{
		{"weight", []int{3, 10}}, {"bias", []int{3}}}},
	"mlp": {batch: 25, classes: 3, tensors: []tensorSp{
		{"0.weight", []int{16, 10}}, {"0.bias", []int{16}},
		{"2.weight", []int{3, 16}}, {"2.bias", []int{3}}}},
}

// Names lists the problems [Load] knows.
func Names() []string { return []string{"lsq", "logreg", "mlp"} }

// Problem is one synthetic problem: its data, initial weights and the
// mini-batch sequence shared by all of its runs.
type Problem struct {
	Name     string
	N        int       // number of examples n
	B        int       // mini-batch size b
	Features int       // input dimension p
	Classes  int       // number of classes; 0 for least squares (lsq)
	X        []float64 // inputs, N×Features row-major
	Y        []float64 // targets: a float for lsq, a 0-based class index otherwise
	Tensors  []Tensor  // parameter tensors in parameter order
	Init     []float64 // initial parameters, flat in parameter order
	Order    [][]int   // Order[e] is the permutation of 0…N−1 used in epoch e

	model model
}

// StepsPerEpoch is n/b.
func (p *Problem) StepsPerEpoch() int { return p.N / p.B }

// Batch returns the example indices used at step k (1-based): epoch
// (k−1) div (n/b), batch (k−1) mod (n/b), i.e. rows perm_e[j·b:(j+1)·b].
func (p *Problem) Batch(k int) ([]int, error) {
	spe := p.StepsPerEpoch()
	if k < 1 || (k-1)/spe >= len(p.Order) {
		return nil, fmt.Errorf("synthetic: %s: step %d: must be in [1, %d]", p.Name, k, spe*len(p.Order))
	}
	e, j := (k-1)/spe, (k-1)%spe
	return p.Order[e][j*p.B : (j+1)*p.B], nil
}

// Load reads problem name ("lsq", "logreg" or "mlp") from dir, the
// conformance public/problems directory: <name>.data.csv.gz,
// <name>.init.csv and <name>.order.csv.gz.
func Load(dir, name string) (*Problem, error) {
	sp, ok := specs[name]
	if !ok {
		return nil, fmt.Errorf("synthetic: problem %q: must be one of %v", name, Names())
	}
	p := &Problem{Name: name, B: sp.batch, Classes: sp.classes}
	if err := p.readData(filepath.Join(dir, name+".data.csv.gz")); err != nil {
		return nil, err
	}
	if err := p.readInit(filepath.Join(dir, name+".init.csv"), sp.tensors); err != nil {
		return nil, err
	}
	if p.N%p.B != 0 {
		return nil, fmt.Errorf("synthetic: %s: n = %d: must be a multiple of b = %d", name, p.N, p.B)
	}
	if err := p.readOrder(filepath.Join(dir, name+".order.csv.gz")); err != nil {
		return nil, err
	}
	switch name {
	case "lsq":
		p.model = lsqModel{}
	case "logreg":
		p.model = logregModel{}
	case "mlp":
		p.model = mlpModel{}
	}
	if err := p.model.check(p); err != nil {
		return nil, err
	}
	return p, nil
}

func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("synthetic: %w", err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return bufio.NewReaderSize(f, 1<<16), f.Close, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("synthetic: %s: %w", path, err)
	}
	return zr, func() error { zr.Close(); return f.Close() }, nil
}

func parseFloat(path string, line int, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("synthetic: %s:%d: %w", path, line, err)
	}
	return v, nil
}

// readData reads the header y,x0,…,x{p−1} and one example per row.
func (p *Problem) readData(path string) error {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return err
	}
	defer closeFn()
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("synthetic: %s: header: %w", path, err)
	}
	if len(head) < 2 || head[0] != "y" {
		return fmt.Errorf("synthetic: %s: header %q: must be y,x0,…", path, strings.Join(head, ","))
	}
	for i, h := range head[1:] {
		if h != "x"+strconv.Itoa(i) {
			return fmt.Errorf("synthetic: %s: header column %d = %q: must be x%d", path, i+1, h, i)
		}
	}
	p.Features = len(head) - 1
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("synthetic: %s: %w", path, err)
		}
		y, err := parseFloat(path, line, rec[0])
		if err != nil {
			return err
		}
		if p.Classes > 0 && (y != float64(int(y)) || y < 0 || int(y) >= p.Classes) {
			return fmt.Errorf("synthetic: %s:%d: label %v: must be an integer in [0, %d)", path, line, y, p.Classes)
		}
		p.Y = append(p.Y, y)
		for _, s := range rec[1:] {
			v, err := parseFloat(path, line, s)
			if err != nil {
				return err
			}
			p.X = append(p.X, v)
		}
	}
	p.N = len(p.Y)
	if p.N == 0 {
		return fmt.Errorf("synthetic: %s: no examples", path)
	}
	return nil
}

// readInit reads name,shape,values lines and checks them against want.
func (p *Problem) readInit(path string, want []tensorSp) error {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return err
	}
	defer closeFn()
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	recs, err := cr.ReadAll()
	if err != nil {
		return fmt.Errorf("synthetic: %s: %w", path, err)
	}
	if len(recs) == 0 || recs[0][0] != "param" {
		return fmt.Errorf("synthetic: %s: missing header param,shape,values", path)
	}
	recs = recs[1:]
	if len(recs) != len(want) {
		return fmt.Errorf("synthetic: %s: %d tensors: must be %d", path, len(recs), len(want))
	}
	for i, rec := range recs {
		line := i + 2
		var shape []int
		size := 1
		for _, s := range strings.Split(rec[1], "x") {
			v, err := strconv.Atoi(s)
			if err != nil || v <= 0 {
				return fmt.Errorf("synthetic: %s:%d: shape %q: must be positive integers joined by x", path, line, rec[1])
			}
			shape = append(shape, v)
			size *= v
		}
		if rec[0] != want[i].name || !slices.Equal(shape, want[i].shape) {
			return fmt.Errorf("synthetic: %s:%d: tensor %s %v: must be %s %v", path, line, rec[0], shape, want[i].name, want[i].shape)
		}
		vals := strings.Fields(rec[2])
		if len(vals) != size {
			return fmt.Errorf("synthetic: %s:%d: %d values: shape %v needs %d", path, line, len(vals), shape, size)
		}
		t := Tensor{Name: rec[0], Shape: shape, Offset: len(p.Init), Len: size}
		for _, s := range vals {
			v, err := parseFloat(path, line, s)
			if err != nil {
				return err
			}
			p.Init = append(p.Init, v)
		}
		p.Tensors = append(p.Tensors, t)
	}
	return nil
}

// readOrder reads epoch,perm lines; each perm must be a permutation of 0…n−1.
func (p *Problem) readOrder(path string) error {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return err
	}
	defer closeFn()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	seen := make([]int, p.N)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			if !strings.HasPrefix(sc.Text(), "epoch,") {
				return fmt.Errorf("synthetic: %s: header %q: must start with epoch,", path, sc.Text())
			}
			continue
		}
		es, ps, ok := strings.Cut(sc.Text(), ",")
		if !ok {
			return fmt.Errorf("synthetic: %s:%d: missing comma", path, line)
		}
		if e, err := strconv.Atoi(es); err != nil || e != len(p.Order) {
			return fmt.Errorf("synthetic: %s:%d: epoch %q: must be %d", path, line, es, len(p.Order))
		}
		perm := make([]int, 0, p.N)
		for s := range strings.FieldsSeq(ps) {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 || v >= p.N || seen[v] == line {
				return fmt.Errorf("synthetic: %s:%d: index %q: must be a permutation of 0…%d", path, line, s, p.N-1)
			}
			seen[v] = line
			perm = append(perm, v)
		}
		if len(perm) != p.N {
			return fmt.Errorf("synthetic: %s:%d: %d indices: must be n = %d", path, line, len(perm), p.N)
		}
		p.Order = append(p.Order, perm)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("synthetic: %s: %w", path, err)
	}
	if len(p.Order) == 0 {
		return fmt.Errorf("synthetic: %s: no epochs", path)
	}
	return nil
}
