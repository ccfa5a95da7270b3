package train

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/salsaopt/salsa/trace"
)

// BenchmarkEpochSave measures the end-of-epoch save (logs + checkpoint) of
// a run that has made `done` steps, at 469 steps an epoch (MNIST, batch
// 128), side by side:
//   - append: this package's appendLogs + checkpoint, which writes the
//     epoch's rows only;
//   - rewrite: the former scheme, which kept every row in the checkpoint and
//     rewrote steps.csv.gz and checkpoint.gob from all of them each epoch.
//
// Run: go test -run '^$' -bench EpochSave ./internal/train/
func BenchmarkEpochSave(b *testing.B) {
	const perEpoch = 469
	row := func(k int) trace.Row {
		f := float64(k)
		return trace.Row{Step: k, LR: 0.1 / (1 + f/1e4), Loss: 1 / (1 + f), X1D: -1e-3 * f, D2: 1e-2 + 1/f, Eta: 0.2, HasEta: k%2 == 0}
	}
	for _, done := range []int{10 * perEpoch, 100 * perEpoch} {
		b.Run(fmt.Sprintf("steps=%d/append", done), func(b *testing.B) {
			dir := b.TempDir()
			ck := &Checkpoint{Version: checkpointVersion}
			for k := 1; k <= done; k++ { // the epochs before, in the files
				ck.Pending = append(ck.Pending, row(k))
				if k%perEpoch == 0 {
					sizes, err := appendLogs(dir, ck, &EpochRow{Epoch: k / perEpoch, Steps: k})
					if err != nil {
						b.Fatal(err)
					}
					ck.Logged, ck.Pending = sizes, nil
				}
			}
			for k := done + 1; k <= done+perEpoch; k++ {
				ck.Pending = append(ck.Pending, row(k))
			}
			b.ResetTimer()
			for range b.N {
				if _, err := appendLogs(dir, ck, &EpochRow{Epoch: done/perEpoch + 1, Steps: done + perEpoch}); err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
					b.Fatal(err)
				}
				if err := writeAtomic(filepath.Join(dir, "checkpoint.gob"), buf.Bytes()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(buf.Len()), "ckpt_bytes")
			}
		})
		b.Run(fmt.Sprintf("steps=%d/rewrite", done), func(b *testing.B) {
			dir := b.TempDir()
			var rows []trace.Row
			for k := 1; k <= done+perEpoch; k++ {
				rows = append(rows, row(k))
			}
			ck := struct {
				Version int
				Rows    []trace.Row
			}{checkpointVersion, rows}
			b.ResetTimer()
			for range b.N {
				var sb bytes.Buffer
				zw := gzip.NewWriter(&sb)
				tw, err := trace.NewTraceWriter(zw)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range rows {
					if err := tw.Write(r); err != nil {
						b.Fatal(err)
					}
				}
				if err := tw.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := zw.Close(); err != nil {
					b.Fatal(err)
				}
				if err := writeAtomic(filepath.Join(dir, "steps.csv.gz"), sb.Bytes()); err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "checkpoint.gob"), buf.Bytes(), 0o644); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(buf.Len()), "ckpt_bytes")
			}
		})
	}
}
