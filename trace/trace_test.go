package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/schedule"
)

const smallTrace = TraceHeader + `
1,0.11000000000000001,1.4076027397430544,0.04947082951278044,0.030825348145934406,0.2
2,28.092959346089767,0.7851167106620394,0.1470755819816731,0.003582224998491833,
3,2.809295934608976e-12,nan,-inf,inf,
`

func TestReadTracePlainAndGzip(t *testing.T) {
	want := []Row{
		{1, 0.11000000000000001, 1.4076027397430544, 0.04947082951278044, 0.030825348145934406, 0.2, true, 0, false, 0, false},
		{2, 28.092959346089767, 0.7851167106620394, 0.1470755819816731, 0.003582224998491833, 0, false, 0, false, 0, false},
		{3, 2.809295934608976e-12, math.NaN(), math.Inf(-1), math.Inf(1), 0, false, 0, false, 0, false},
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(smallTrace))
	zw.Close()
	crlf := strings.ReplaceAll(smallTrace, "\n", "\r\n")
	noFinalNewline := strings.TrimSuffix(smallTrace, "\n")
	for name, in := range map[string][]byte{"plain": []byte(smallTrace), "gzip": gz.Bytes(),
		"crlf": []byte(crlf), "no final newline": []byte(noFinalNewline)} {
		got, err := ReadTrace(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.EqualFunc(got, want, sameRow) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	// Writing the rows back gives the plain text.
	var out bytes.Buffer
	tw, _ := NewTraceWriter(&out)
	for _, r := range want {
		tw.Write(r)
	}
	tw.Flush()
	if out.String() != smallTrace {
		t.Errorf("written:\n%s\nwant:\n%s", out.String(), smallTrace)
	}
}

func TestReadTraceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.trace.csv")
	if err := os.WriteFile(path, []byte(TraceHeader+"\n1,1.0,2.0,3.0,oops,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadTraceFile(path)
	if err == nil || !strings.Contains(err.Error(), path+": line 2, column 5 (d2)") {
		t.Errorf("error %v does not name the file, line and column", err)
	}
	if _, err := ReadTraceFile(path + ".missing"); err == nil {
		t.Error("missing file: no error")
	}
}

// sameRow compares rows bitwise, so that NaN equals NaN and −0 differs from 0.
func sameRow(a, b Row) bool {
	eq := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	return a.Step == b.Step && eq(a.LR, b.LR) && eq(a.Loss, b.Loss) && eq(a.X1D, b.X1D) && eq(a.D2, b.D2) &&
		a.HasEta == b.HasEta && eq(a.Eta, b.Eta) && a.HasStepSize == b.HasStepSize && eq(a.StepSize, b.StepSize) &&
		a.HasX2 == b.HasX2 && eq(a.X2, b.X2)
}

// TestSeventhColumn reads and writes the optional seventh columns: a
// peer's step_size and a norm-capped run's x2, each cell empty or a
// number, and the header saying which the rows have.
func TestSeventhColumn(t *testing.T) {
	for _, c := range []struct {
		name, header string
		writer       func(io.Writer) (*TraceWriter, error)
		with         Row // step 1, with the column's value
	}{
		{"step_size", StepSizeHeader, NewStepSizeTraceWriter, Row{StepSize: 0.001, HasStepSize: true}},
		{"x2", X2Header, NewX2TraceWriter, Row{X2: 0.001, HasX2: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.header + "\n1,1.0,2.3,-0.5,0.25,,0.001\n2,1.0,2.1,-0.5,0.25,0.5,\n"
			first := c.with
			first.Step, first.LR, first.Loss, first.X1D, first.D2 = 1, 1, 2.3, -0.5, 0.25
			want := []Row{first, {Step: 2, LR: 1, Loss: 2.1, X1D: -0.5, D2: 0.25, Eta: 0.5, HasEta: true}}
			got, err := ReadTrace(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, sameRow) {
				t.Errorf("got %v, want %v", got, want)
			}
			var out bytes.Buffer
			tw, _ := c.writer(&out)
			for _, r := range want {
				if err := tw.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			tw.Flush()
			if out.String() != in {
				t.Errorf("written:\n%s\nwant:\n%s", out.String(), in)
			}
			// The conformance header has no column for it, nor has the
			// other seventh column's.
			for _, other := range []func(io.Writer) (*TraceWriter, error){NewTraceWriter, NewStepSizeTraceWriter, NewX2TraceWriter} {
				tw, _ = other(io.Discard)
				if tw.x2 == c.with.HasX2 && tw.stepSize == c.with.HasStepSize {
					continue
				}
				if err := tw.Write(want[0]); err == nil || !strings.Contains(err.Error(), "step 1") || !strings.Contains(err.Error(), c.name) {
					t.Errorf("a row with %s under another header: error %v, want one naming step 1 and %s", c.name, err, c.name)
				}
				if err := tw.Write(want[1]); err != nil {
					t.Errorf("a row without %s under another header: %v", c.name, err)
				}
			}
		})
	}
}

// sameEvent compares events bitwise like sameRow.
func sameEvent(a, b schedule.Event) bool {
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) // %#v prints NaN as NaN and −0 as -0
}

func TestMalformedTrace(t *testing.T) {
	for _, c := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{"", 1, 0, "missing header"},
		{"step,lr,loss,x1d,d2\n", 1, 0, "header is"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0\n", 2, 0, "5 columns, want 6"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0,5.0,6.0\n", 2, 0, "7 columns, want 6"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0,\n\n", 3, 0, "1 columns"},
		{TraceHeader + "\n1.5,1.0,2.0,3.0,4.0,\n", 2, 1, `(step): "1.5" is not an integer`},
		{TraceHeader + "\n+1,1.0,2.0,3.0,4.0,\n", 2, 1, "not an integer"},
		{TraceHeader + "\n1,,2.0,3.0,4.0,\n", 2, 2, "(lr): empty cell"},
		{TraceHeader + "\n1,1.0,abc,3.0,4.0,\n", 2, 3, `(loss): "abc" is not a number`},
		{TraceHeader + "\n1,1.0,2.0,0x1p-2,4.0,\n", 2, 4, "(x1d): \"0x1p-2\" is not a decimal number"},
		{TraceHeader + "\n1,1.0,2.0,3.0,1_0,\n", 2, 5, "(d2)"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0,1e999\n", 2, 6, "(eta): \"1e999\" is out of the float64 range"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0, 1\n", 2, 6, "not a number"},
		{TraceHeader + "\n1,1.0,2.0,3.0,4.0,\n2,1.0,2.0,3.0,4.0,5.0,\n", 3, 0, "7 columns"},
		{StepSizeHeader + "\n1,1.0,2.0,3.0,4.0,\n", 2, 0, "6 columns, want 7"},
		{StepSizeHeader + "\n1,1.0,2.0,3.0,4.0,,x\n", 2, 7, `(step_size): "x" is not a decimal number`},
		{X2Header + "\n1,1.0,2.0,3.0,4.0,\n", 2, 0, "6 columns, want 7"},
		{X2Header + "\n1,1.0,2.0,3.0,4.0,,x\n", 2, 7, `(x2): "x" is not a decimal number`},
		{"step,lr,loss,x1d,d2,eta,eta\n", 1, 0, `or "step,lr,loss,x1d,d2,eta,step_size" or "step,lr,loss,x1d,d2,eta,x2"`},
		{"\x1f\x8bnot gzip", 0, 0, "gzip"},
	} {
		_, err := ReadTrace(strings.NewReader(c.in))
		checkParseError(t, c.in, err, c.line, c.col, c.msg)
	}
}

// checkParseError checks that err is a *ParseError at line, col (if line > 0)
// and that its message contains msg.
func checkParseError(t *testing.T, in string, err error, line, col int, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%q: no error, want %q", in, msg)
		return
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("%q: error %q does not contain %q", in, err, msg)
	}
	if line == 0 {
		return
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("%q: error %q is not a *ParseError", in, err)
		return
	}
	if pe.Line != line || pe.Column != col {
		t.Errorf("%q: error at line %d column %d, want %d, %d (%v)", in, pe.Line, pe.Column, line, col, err)
	}
}

// TestEventKinds writes one event of every kind and reads it back. The
// statopt kinds' lines are rows of logreg_salsa_lr1e-1.events.csv.
func TestEventKinds(t *testing.T) {
	for _, c := range []struct {
		ev   schedule.Event
		line string
	}{
		{schedule.Event{Step: 900, Kind: schedule.KindTest, Mean: 0.030498048298145654, Lower: -0.002098237704101037,
			Upper: 0.06309433430039235, Composite: true, Count: 113, Mean1: 0.11133247132935839,
			Mean2: -0.048918226960589666, Std: 0.17488048965026984, Dof: 112},
			"900,test,0.030498048298145654,-0.002098237704101037,0.06309433430039235,0,1,113,0.11133247132935839,-0.048918226960589666,0.17488048965026984,112"},
		{schedule.Event{Step: 801, Kind: schedule.KindSlopeTest, Slope: 0.010384474024258421, Prob: 0.9999151325320291, Count: 101},
			"801,slope_test,0.010384474024258421,0.9999151325320291,0,101"},
		{schedule.Event{Step: 801, Kind: schedule.KindSwitch, Reason: "slope"}, "801,switch,slope"},
		{schedule.Event{Step: 9000, Kind: schedule.KindDrop, NewLR: 2.809295934608976e-05}, "9000,drop,2.809295934608976e-05"},
		// This package's own rows.
		{schedule.Event{Step: 700, Kind: schedule.KindEquivalenceTest, Mean: -1e-05, Lower: -0.5, Upper: 0.25,
			Margin: 0.75, Stationary: true, Count: 300, Std: 1.5, Dof: 17},
			"700,equivalence_test,-1e-05,-0.5,0.25,0.75,1,300,1.5,17"},
		{schedule.Event{Step: 1000, Kind: schedule.KindValidation, ValLoss: 0.5, BestLoss: 0.25, Bad: 3},
			"1000,val_check,0.5,0.25,3"},
	} {
		if got := FormatEvent(c.ev); got != c.line {
			t.Errorf("FormatEvent(%+v) =\n%s, want\n%s", c.ev, got, c.line)
		}
		evs, err := ReadEvents(strings.NewReader(EventsHeader + "\n" + c.line + "\n"))
		if err != nil || len(evs) != 1 || !sameEvent(evs[0], c.ev) {
			t.Errorf("ReadEvents(%s) = %+v, %v; want %+v", c.line, evs, err, c.ev)
		}
	}
}

func TestWriteEventsRejects(t *testing.T) {
	for _, ev := range []schedule.Event{
		{Step: 1, Kind: 0},
		{Step: 1, Kind: schedule.Kind(99)},
		{Step: 1, Kind: schedule.KindSwitch, Reason: "a,b"},
		{Step: 1, Kind: schedule.KindSwitch, Reason: "x\ny"},
		{Step: 1, Kind: schedule.KindSwitch, Reason: `"q"`},
	} {
		var buf bytes.Buffer
		if err := WriteEvents(&buf, []schedule.Event{ev}); err == nil {
			t.Errorf("WriteEvents(%+v): no error", ev)
		}
	}
}

func TestMalformedEvents(t *testing.T) {
	h := EventsHeader + "\n"
	for _, c := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{"", 1, 0, "missing header"},
		{"step,kind,details\n", 1, 0, "header is"},
		{h + "801\n", 2, 0, "1 columns"},
		{h + "801,frobnicate,1\n", 2, 2, `(kind): unknown event kind "frobnicate"`},
		{h + "x,drop,0.1\n", 2, 1, "(step)"},
		{h + "1,drop\n", 2, 0, "2 columns, want 3 for kind drop (step,kind,new_lr)"},
		{h + "1,drop,0.1,a,b\n", 2, 0, "5 columns"},
		{h + "1,drop,zero\n", 2, 3, `(new_lr): "zero" is not a number`},
		{h + "1,switch\n", 2, 0, "want 3 for kind switch"},
		{h + "1,switch,\"slope\"\n", 2, 3, "(reason)"},
		{h + "801,slope_test,0.01,0.99,0,101,7\n", 2, 0, "7 columns, want 6"},
		{h + "801,slope_test,0.01,0.99,true,101\n", 2, 5, `(decreasing): "true" is not a boolean`},
		{h + "801,slope_test,0.01,0.99,0,1e2\n", 2, 6, "(count)"},
		{h + "900,test,0.03,-0.002,0.06,0,1,113,0.11,-0.04,0.17\n", 2, 0, "11 columns, want 12"},
		{h + "900,test,0.03,-0.002,0.06,0,2,113,0.11,-0.04,0.17,112\n", 2, 7, "(composite)"},
		{h + "900,test,0.03,-0.002,0.06,0,1,113,0.11,-0.04,0.17,11.2\n", 2, 12, "(dof)"},
		{h + "1,equivalence_test,1,2,3,x,1,10,1,9\n", 2, 6, "(margin)"},
		{h + "1,val_check,1,2,3.5\n", 2, 5, "(bad)"},
		{h + "1,switch,slope\n\n", 3, 0, "1 columns"},
	} {
		_, err := ReadEvents(strings.NewReader(c.in))
		checkParseError(t, c.in, err, c.line, c.col, c.msg)
	}
}

func TestReadMeta(t *testing.T) {
	const good = `{"run": "r", "problem": "lsq", "extra_top_level": [1, {"a": 2}],
	 "config": {"opt": "SALSA", "lr": 0.1, "drop_factor": 10, "gamma": 0.11180339887498948, "ls_dir": "g", "minN_stats": 100},
	 "steps": 20000, "final_full_objective": 0.12446274996287614, "final_lr": 1.0000000000000001e-19,
	 "drops": [[1100, 0.01], [4700, 1e-05]], "switches": [[801, "slope"]], "n_tests": 50, "n_slope_tests": 1}`
	m, err := DecodeMeta(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Opt != "SALSA" || m.Config.DropFactor != 10 || m.Config.Gamma != 0.11180339887498948 || m.Config.MinNStats != 100 ||
		m.FinalLR != 1.0000000000000001e-19 || !slices.Equal(m.Drops, []Drop{{1100, 0.01}, {4700, 1e-05}}) ||
		!slices.Equal(m.Switches, []Switch{{801, "slope"}}) || m.Steps != 20000 || m.NTests != 50 || m.NSlopeTests != 1 {
		t.Errorf("DecodeMeta = %+v", m)
	}
	if !m.Config.Has("gamma") || m.Config.Has("momentum") ||
		!slices.Equal(m.Config.Keys(), []string{"drop_factor", "gamma", "lr", "ls_dir", "minN_stats", "opt"}) {
		t.Errorf("config keys = %v", m.Config.Keys())
	}
	for _, c := range []struct{ old, new, msg string }{
		{`"minN_stats": 100`, `"minN_stat": 100`, `config: unknown key "minN_stat"`},
		{`"lr": 0.1`, `"lr": null`, "config: lr = null"},
		{`"minN_stats": 100`, `"minN_stats": 100.5`, "minN_stats"},
		{`"lr": 0.1`, `"lr": "0.1"`, "lr"},
		{`[1100, 0.01]`, `[1100]`, "drop [1100]: must be [step, new_lr]"},
		{`[1100, 0.01]`, `[1100, 0.01, 3]`, "must be [step, new_lr]"},
		{`[1100, 0.01]`, `[1100.5, 0.01]`, "drop [1100.5, 0.01]: step"},
		{`[801, "slope"]`, `[801, 1]`, "reason"},
		{`"n_tests": 50, `, ``, "missing key(s) n_tests"},
		{`"config": {`, `"config": null, "x": {`, "config: must be an object"},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		_, err := DecodeMeta(strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s → %s: error %v, want %q", c.old, c.new, err, c.msg)
		}
	}
}

// TestReadMetaSettings: a replay's config needs only the settings; the
// recorded outcomes may be left out, and present ones must still parse.
func TestReadMetaSettings(t *testing.T) {
	const settings = `{"config": {"opt": "SASA", "lr": 0.1, "drop_factor": 10, "minN_stats": 100}}`
	m, err := DecodeMetaSettings(strings.NewReader(settings))
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Opt != "SASA" || m.Config.LR != 0.1 || m.Config.MinNStats != 100 || m.Steps != 0 || m.Drops != nil {
		t.Errorf("DecodeMetaSettings = %+v", m)
	}
	if _, err := DecodeMeta(strings.NewReader(settings)); err == nil || !strings.Contains(err.Error(), "missing key(s) run, problem, steps") {
		t.Errorf("DecodeMeta without the outcomes: %v", err)
	}
	for _, c := range []struct{ in, msg string }{
		{`{"run": "r"}`, "missing key(s) config"},
		{`null`, "must be a JSON object"},
		{`{"config": {"opt": "SASA", "lr": 0.1, "minN_stat": 3}}`, `config: unknown key "minN_stat"`},
		{`{"config": {"opt": "SASA", "lr": 0.1}, "drops": [[1, 2, 3]]}`, "must be [step, new_lr]"},
	} {
		if _, err := DecodeMetaSettings(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.msg)
		}
	}
}

func TestReadManifest(t *testing.T) {
	const in = "run,opt,steps,n_drops,drop_steps,switch_step,switch_reason,n_tests,n_slope_tests\n" +
		"a,SALSA,20000,2,1800 4100,801,slope,88,1\n" +
		"b,SASA,20000,0,,,,240,0\n"
	rows, err := ReadManifest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Run != "a" || !slices.Equal(rows[0].DropSteps, []int{1800, 4100}) ||
		rows[0].SwitchStep != 801 || rows[0].SwitchReason != "slope" || rows[0].NTests != 88 || rows[0].NSlopeTests != 1 ||
		rows[0].Fields["opt"] != "SALSA" || rows[1].DropSteps != nil || rows[1].SwitchStep != 0 || rows[1].NTests != 240 {
		t.Errorf("ReadManifest = %+v", rows)
	}
	for _, c := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{strings.Replace(in, "2,1800 4100", "3,1800 4100", 1), 2, 5, "2 steps, but n_drops = 3"},
		{strings.Replace(in, "1800 4100", "1800  4100", 1), 2, 5, "(drop_steps): empty cell"},
		{strings.Replace(in, ",88,", ",eighty,", 1), 2, 8, "(n_tests)"},
		{strings.Replace(in, "run,", "name,", 1), 1, 0, `missing column "run"`},
		{strings.Replace(in, "b,SASA,", "b,", 1), 3, 0, "8 columns, want 9"},
	} {
		_, err := ReadManifest(strings.NewReader(c.in))
		checkParseError(t, c.in, err, c.line, c.col, c.msg)
	}
}

// syntheticTrace returns a plain-text trace of n rows with values of the
// magnitudes of a real run.
func syntheticTrace(n int) []byte {
	var buf bytes.Buffer
	tw, _ := NewTraceWriter(&buf)
	lr := 0.1
	for k := 1; k <= n; k++ {
		if k%1000 == 0 {
			lr /= 10
		}
		x := float64(k)
		tw.Write(Row{Step: k, LR: lr, Loss: 1 / math.Sqrt(x), X1D: math.Sin(x) * 1e-3, D2: 1 / x, Eta: 2 * lr, HasEta: k < n/2})
	}
	tw.Flush()
	return buf.Bytes()
}

// BenchmarkReadTrace reads a 20 000-step trace (one conformance run).
func BenchmarkReadTrace(b *testing.B) {
	in := syntheticTrace(20000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := ReadTrace(bytes.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteTrace writes a 20 000-step trace.
func BenchmarkWriteTrace(b *testing.B) {
	rows, err := ReadTrace(bytes.NewReader(syntheticTrace(20000)))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		tw, _ := NewTraceWriter(&buf)
		for _, r := range rows {
			tw.Write(r)
		}
		tw.Flush()
	}
	b.SetBytes(int64(buf.Len()))
}
