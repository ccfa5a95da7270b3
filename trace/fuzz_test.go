package trace

import (
	"bytes"
	"compress/gzip"
	"slices"
	"testing"
)

// FuzzReadTrace checks that ReadTrace never panics and that whatever it
// accepts is written back in a form that reads to the same rows and is a
// fixed point of read-then-write.
func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add([]byte(TraceHeader + "\r\n1,1e-05,-0.0,0.0001,1e+16,\r\n"))
	f.Add([]byte(TraceHeader + "\n-3,Infinity,NaN,-inf,5e-324,1.7976931348623157e+308"))
	f.Add([]byte(StepSizeHeader + "\n1,1.0,2.0,3.0,4.0,,1e-3\n2,1.0,2.0,3.0,4.0,0.5,\n"))
	f.Add([]byte(X2Header + "\n1,1.0,2.0,3.0,4.0,,1e-3\n2,1.0,2.0,3.0,4.0,0.5,\n"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(smallTrace))
	zw.Close()
	f.Add(gz.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := ReadTrace(bytes.NewReader(in))
		if err != nil {
			return
		}
		out := writeRows(t, rows)
		again, err := ReadTrace(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("written trace does not read back: %v\n%s", err, out)
		}
		if !slices.EqualFunc(rows, again, sameRow) {
			t.Fatalf("rows changed:\n%v\n%v", rows, again)
		}
		if out2 := writeRows(t, again); !bytes.Equal(out, out2) {
			t.Fatalf("second write differs:\n%s\n%s", out, out2)
		}
	})
}

// writeRows writes rows with the step_size column if one of them has a
// step size, with the x2 column if one has ‖x_{k+1}‖².
func writeRows(t *testing.T, rows []Row) []byte {
	var buf bytes.Buffer
	newWriter := NewTraceWriter
	if slices.ContainsFunc(rows, func(r Row) bool { return r.HasStepSize }) {
		newWriter = NewStepSizeTraceWriter
	}
	if slices.ContainsFunc(rows, func(r Row) bool { return r.HasX2 }) {
		newWriter = NewX2TraceWriter
	}
	tw, err := newWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := tw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadEvents is FuzzReadTrace for events files.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte(EventsHeader + "\n801,slope_test,0.010384474024258421,0.9999151325320291,0,101\n801,switch,slope\n" +
		"900,test,0.030498048298145654,-0.002098237704101037,0.06309433430039235,0,1,113,0.11133247132935839,-0.048918226960589666,0.17488048965026984,112\n" +
		"1800,drop,2.8092959346089765\n"))
	f.Add([]byte(EventsHeader + "\r\n5,drop,0.01,validation\r\n700,equivalence_test,-1e-05,-0.5,0.25,0.75,1,300,1.5,17\r\n1000,val_check,nan,inf,3"))
	f.Add([]byte(EventsHeader + "\n1,switch,\n2,drop,1e+300,\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := ReadEvents(bytes.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteEvents(&out, evs); err != nil {
			t.Fatalf("events that read do not write: %v", err)
		}
		again, err := ReadEvents(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("written events do not read back: %v\n%s", err, out.Bytes())
		}
		if !slices.EqualFunc(evs, again, sameEvent) {
			t.Fatalf("events changed:\n%+v\n%+v", evs, again)
		}
		var out2 bytes.Buffer
		if err := WriteEvents(&out2, again); err != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("second write differs (%v):\n%s\n%s", err, out.Bytes(), out2.Bytes())
		}
	})
}
