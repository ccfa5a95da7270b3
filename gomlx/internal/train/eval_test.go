package train

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/salsaopt/salsa/data"
)

// EvaluateCheckpoint with the run's own --test-limit gives the last epoch's
// test and validation losses bit for bit (the model is the checkpoint's,
// rebuilt on a fresh engine); with another limit it evaluates that many
// examples or tokens, 0 the whole splits; the checkpoint is left as it was.
// The cases cover the native engine (logreg, a held-out validation split),
// an lstm on GoMLX (carried state, dropout) and Schedule-Free AdamW, whose
// model is evaluated at x, not at the iterate it steps from.
func TestEvaluateCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three small models")
	}
	text := func() *Source {
		tok := func(n int, seed uint64) []int { return synthText(n, 12, seed).Tokens }
		vocab := make([]string, 12)
		for i := range vocab {
			vocab[i] = string(rune('a' + i))
		}
		return &Source{Text: &data.Corpus{Vocab: vocab, Train: tok(4*(8*4+1), 1), Valid: tok(300, 2), Test: tok(400, 3)}}
	}
	mnist, err := Load(context.Background(), "", "mnist", false, "", 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		src   *Source
		o     Options
		fullN [2]int // the whole test and validation splits of a text
	}{
		{"logreg", mnist,
			Options{Dataset: "mnist", Model: "logreg", Method: "salsa", Limit: 600, TestLimit: 70, HoldOut: 0.1}, [2]int{}},
		{"lstm", text(), Options{Dataset: "tinyshakespeare", Model: "lstm", Method: "salsa", Batch: 4, TestLimit: 50,
			Sets: [][2]string{{"bptt", "8"}}}, [2]int{400, 300}},
		{"lstm/schedule-free-adamw", text(), Options{Dataset: "tinyshakespeare", Model: "lstm", Method: "schedule-free-adamw", Batch: 4, TestLimit: 50,
			Sets: [][2]string{{"bptt", "8"}}}, [2]int{400, 300}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Preset, o.LR0, o.Epochs, o.Seed, o.Engine = "paper", 0.01, 2, 3, "auto"
			if lr, ok := MethodLR0(o.Method); ok {
				o.LR0 = lr
			}
			if c.src.Text != nil {
				o.HoldOut = 0.1 // a text's own validation split, evaluated each epoch
			}
			p, err := NewPlan(o, c.src.NTrain())
			if err != nil {
				t.Fatal(err)
			}
			tr, val, test, err := Splits(c.src, p)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := Run(context.Background(), p, dir, nil, 0, tr, val, test, nil, nil); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
			if err != nil {
				t.Fatal(err)
			}
			ck, err := ReadCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			last := ck.Epochs[len(ck.Epochs)-1]
			ev, err := EvaluateCheckpoint(ck, c.src, -1)
			if err != nil {
				t.Fatal(err)
			}
			if ev.TestLoss != last.TestLoss || ev.TestAcc != last.TestAcc || ev.ValLoss != last.ValLoss || ev.ValAcc != last.ValAcc {
				t.Errorf("the run's own limit: test %v %v, val %v %v; epochs.csv's last row: test %v %v, val %v %v",
					ev.TestLoss, ev.TestAcc, ev.ValLoss, ev.ValAcc, last.TestLoss, last.TestAcc, last.ValLoss, last.ValAcc)
			}
			if ev.Step != ck.Step || ev.Epochs != 2 || ev.TestN != test.N() || ev.ValN != val.N() || ev.Text != (c.src.Text != nil) {
				t.Errorf("the run's own limit: %+v; want step %d, 2 epochs, test %d, val %d", ev, ck.Step, test.N(), val.N())
			}
			full, err := EvaluateCheckpoint(ck, c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			wantTest, wantVal := c.fullN[0], c.fullN[1]
			if c.src.Images != nil { // the held-out split does not depend on --test-limit
				wantTest, wantVal = c.src.Images.TestX.N, p.NVal
			}
			if full.TestN != wantTest || full.ValN != wantVal || math.IsNaN(full.TestLoss) || math.IsNaN(full.ValLoss) || full.TestLoss == ev.TestLoss {
				t.Errorf("--test-limit 0: test %d tokens or examples (loss %v), val %d (loss %v); want %d and %d, and another test loss than %v",
					full.TestN, full.TestLoss, full.ValN, full.ValLoss, wantTest, wantVal, ev.TestLoss)
			}
			if some, err := EvaluateCheckpoint(ck, c.src, 40); err != nil || some.TestN != 40 {
				t.Errorf("--test-limit 40: %+v, %v", some, err)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "checkpoint.gob")); !bytes.Equal(after, before) {
				t.Errorf("the checkpoint changed")
			}
		})
	}
}
