package trace

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/schedule"
)

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + ":\n got  " + g[i] + "\n want " + w[i]
		}
	}
	return "lengths differ: " + itoa(len(g)) + " vs " + itoa(len(w)) + " lines"
}

func itoa(n int) string { return string(appendInt(nil, n)) }

// TestConformance checks, for every run of the public conformance suite, that
// the events and trace files survive a read and a write byte for byte (which
// checks FormatFloat against Python's repr on every float in them), and that
// meta.json and manifest.csv agree with the events and the trace.
func TestConformance(t *testing.T) {
	pub := conformance.PublicDir(t)
	manifest, err := ReadManifestFile(filepath.Join(pub, "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Every file in the directory belongs to a manifest run.
	runs := map[string]bool{}
	for _, m := range manifest {
		runs[m.Run] = true
	}
	for _, suffix := range []string{".events.csv", ".trace.csv.gz", ".meta.json"} {
		files, _ := filepath.Glob(filepath.Join(pub, "*"+suffix))
		if len(files) != len(manifest) {
			t.Errorf("%d *%s files, %d manifest rows", len(files), suffix, len(manifest))
		}
		for _, f := range files {
			if run := strings.TrimSuffix(filepath.Base(f), suffix); !runs[run] {
				t.Errorf("%s: run %q is not in manifest.csv", f, run)
			}
		}
	}

	var nRows, nFloats, nEvents int
	for _, m := range manifest {
		t.Run(m.Run, func(t *testing.T) {
			base := filepath.Join(pub, m.Run)

			// Events: read, write, compare bytes.
			want, err := os.ReadFile(base + ".events.csv")
			if err != nil {
				t.Fatal(err)
			}
			evs, err := ReadEvents(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteEvents(&got, evs); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("events round trip differs at %s", firstDiff(got.Bytes(), want))
			}
			nEvents += len(evs)

			// Trace: read the .gz, write plain text, compare with the decompressed file.
			gz, err := os.ReadFile(base + ".trace.csv.gz")
			if err != nil {
				t.Fatal(err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := ReadTrace(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			got.Reset()
			tw, err := NewTraceWriter(&got)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if err := tw.Write(r); err != nil {
					t.Fatal(err)
				}
				nFloats += 4
				if r.HasEta {
					nFloats++
				}
			}
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), plain) {
				t.Errorf("trace round trip differs at %s", firstDiff(got.Bytes(), plain))
			}
			nRows += len(rows)

			checkSummary(t, m, evs, rows, base+".meta.json")
		})
	}
	t.Logf("%d runs: %d trace rows (%d floats), %d events, all byte-identical", len(manifest), nRows, nFloats, nEvents)
}

// checkSummary checks meta.json and the manifest row against the events and
// the trace of one run.
func checkSummary(t *testing.T, m ManifestRow, evs []schedule.Event, rows []Row, metaPath string) {
	t.Helper()
	meta, err := ReadMeta(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	var nTests, nSlope int
	var drops []Drop
	var switches []Switch
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindTest:
			nTests++
		case schedule.KindSlopeTest:
			nSlope++
		case schedule.KindDrop:
			drops = append(drops, Drop{e.Step, e.NewLR})
		case schedule.KindSwitch:
			switches = append(switches, Switch{e.Step, e.Reason})
		}
	}
	var dropSteps []int
	for _, d := range drops {
		dropSteps = append(dropSteps, d.Step)
	}

	// meta.json against the events and the trace.
	if meta.Run != m.Run {
		t.Errorf("meta run = %q, want %q", meta.Run, m.Run)
	}
	if meta.NTests != nTests || meta.NSlopeTests != nSlope {
		t.Errorf("meta n_tests, n_slope_tests = %d, %d; events have %d, %d", meta.NTests, meta.NSlopeTests, nTests, nSlope)
	}
	if !slices.Equal(meta.Drops, drops) {
		t.Errorf("meta drops = %v, events %v", meta.Drops, drops)
	}
	if !slices.Equal(meta.Switches, switches) {
		t.Errorf("meta switches = %v, events %v", meta.Switches, switches)
	}
	if len(rows) != meta.Steps || rows[len(rows)-1].Step != meta.Steps {
		t.Errorf("trace has %d rows ending at step %d; meta steps = %d", len(rows), rows[len(rows)-1].Step, meta.Steps)
	}
	// final_lr is the lr the next step would use: the last drop's if it
	// happened at the last step, else the last row's.
	wantLR := rows[len(rows)-1].LR
	if n := len(drops); n > 0 && drops[n-1].Step == meta.Steps {
		wantLR = drops[n-1].NewLR
	}
	if meta.FinalLR != wantLR {
		t.Errorf("meta final_lr = %v, trace and drops give %v", meta.FinalLR, wantLR)
	}
	salsa := meta.Config.Opt == "SALSA"
	if meta.Config.Has("gamma") != salsa || meta.Config.Has("ls_dir") != salsa {
		t.Errorf("config opt %q has gamma %v, ls_dir %v", meta.Config.Opt, meta.Config.Has("gamma"), meta.Config.Has("ls_dir"))
	}
	if salsa && meta.Config.LSDir != "g" {
		t.Errorf("config ls_dir = %q, want g", meta.Config.LSDir)
	}

	// The manifest row against the events and meta.json.
	if m.NTests != nTests || m.NSlopeTests != nSlope {
		t.Errorf("manifest n_tests, n_slope_tests = %d, %d; events have %d, %d", m.NTests, m.NSlopeTests, nTests, nSlope)
	}
	if !slices.Equal(m.DropSteps, dropSteps) {
		t.Errorf("manifest drop_steps = %v, events %v", m.DropSteps, dropSteps)
	}
	var sw Switch
	if len(switches) > 0 {
		sw = switches[0]
	}
	if m.SwitchStep != sw.Step || m.SwitchReason != sw.Reason {
		t.Errorf("manifest switch = %d %q, events %v", m.SwitchStep, m.SwitchReason, switches)
	}
	if m.Steps != meta.Steps || m.Fields["opt"] != meta.Config.Opt || m.Fields["force_var_mode"] != meta.Config.ForceVarMode {
		t.Errorf("manifest steps, opt, force_var_mode = %d %q %q; meta %d %q %q", m.Steps, m.Fields["opt"],
			m.Fields["force_var_mode"], meta.Steps, meta.Config.Opt, meta.Config.ForceVarMode)
	}
	if m.Fields["lr"] != FormatFloat(meta.Config.LR) {
		t.Errorf("manifest lr = %s, meta %v", m.Fields["lr"], meta.Config.LR)
	}
}
