package trace

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// ManifestRow is one run of manifest.csv. The summary columns are parsed;
// every column, those included, is also in Fields as written.
type ManifestRow struct {
	Run          string
	Steps        int
	NDrops       int
	DropSteps    []int  // the steps of all drops (the column is space-separated)
	SwitchStep   int    // 0 when the run did not switch
	SwitchReason string // "" when the run did not switch
	NTests       int
	NSlopeTests  int
	Fields       map[string]string // column name → cell
}

// manifestRequired are the columns ReadManifest parses.
var manifestRequired = []string{"run", "steps", "n_drops", "drop_steps", "switch_step", "switch_reason", "n_tests", "n_slope_tests"}

// ReadManifest reads a manifest.csv: a header of column names, then one row
// per run with as many cells. Cells are unquoted.
func ReadManifest(r io.Reader) ([]ManifestRow, error) {
	lr := newLineReader(r)
	head, ok, err := lr.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &ParseError{Line: 1, Err: errors.New("missing header")}
	}
	names := split(nil, head)
	index := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := index[n]; dup {
			return nil, cellError(1, i, names, errors.New("duplicate column"))
		}
		index[n] = i
	}
	for _, n := range manifestRequired {
		if _, ok := index[n]; !ok {
			return nil, &ParseError{Line: 1, Err: fmt.Errorf("missing column %q", n)}
		}
	}
	var rows []ManifestRow
	var cells []string
	for {
		line, ok, err := lr.next()
		if err != nil {
			return rows, err
		}
		if !ok {
			return rows, nil
		}
		cells = split(cells, line)
		if len(cells) != len(names) {
			return rows, &ParseError{Line: lr.line, Err: fmt.Errorf("%d columns, want %d", len(cells), len(names))}
		}
		m := ManifestRow{Fields: make(map[string]string, len(names))}
		for i, n := range names {
			m.Fields[n] = cells[i]
		}
		m.Run = cells[index["run"]]
		m.SwitchReason = cells[index["switch_reason"]]
		for _, f := range []struct {
			name     string
			p        *int
			optional bool
		}{{"steps", &m.Steps, false}, {"n_drops", &m.NDrops, false}, {"switch_step", &m.SwitchStep, true},
			{"n_tests", &m.NTests, false}, {"n_slope_tests", &m.NSlopeTests, false}} {
			s := cells[index[f.name]]
			if s == "" && f.optional {
				continue
			}
			if *f.p, err = parseInt(s); err != nil {
				return rows, cellError(lr.line, index[f.name], names, err)
			}
		}
		if s := cells[index["drop_steps"]]; s != "" {
			for _, w := range strings.Split(s, " ") {
				k, err := parseInt(w)
				if err != nil {
					return rows, cellError(lr.line, index["drop_steps"], names, err)
				}
				m.DropSteps = append(m.DropSteps, k)
			}
		}
		if len(m.DropSteps) != m.NDrops {
			return rows, cellError(lr.line, index["drop_steps"], names,
				fmt.Errorf("%d steps, but n_drops = %d", len(m.DropSteps), m.NDrops))
		}
		rows = append(rows, m)
	}
}

// ReadManifestFile reads the named manifest.csv (see [ReadManifest]).
func ReadManifestFile(path string) ([]ManifestRow, error) {
	return readFile(path, ReadManifest)
}
