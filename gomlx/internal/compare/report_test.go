package compare

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readEpochs reads what salsa train writes, empty cells as NaN, and refuses
// a cell that is not a number or a row of another length, naming the line.
// Before, both were read as NaN or skipped, and a report then said the run
// had fewer epochs than it had, without saying why.
func TestReadEpochs(t *testing.T) {
	const header = "epoch,steps,lr,train_loss,test_loss,test_acc,test_ppl,val_loss,switched,drops,seconds,val_acc\n"
	dir := t.TempDir()
	for _, c := range []struct {
		body, want string
	}{
		{"1,14,0.5,2.3,2.2,0.9,,,0,0,5.5,\n2,28,0.25,NaN,2.1,0.91,,,0,0,11,\n", ""},
		{"1,14,0.5,2.3,2.2,0.9x,,,0,0,5.5,\n", `line 2, column test_acc: "0.9x" is not a number`},
		{"1,14,0.5,2.3\n", "line 2 has 4 cells: the header has 12"},
	} {
		path := filepath.Join(dir, "epochs.csv")
		if err := os.WriteFile(path, []byte(header+c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		es, err := readEpochs(path)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: err = %v, want %q", c.body, err, c.want)
			}
			continue
		}
		if err != nil || len(es) != 2 || es[1].Steps != 28 || es[1].TestAcc != 0.91 || !math.IsNaN(es[1].TrainLoss) || !math.IsNaN(es[0].ValLoss) {
			t.Errorf("%q: %+v, %v", c.body, es, err)
		}
	}
}
