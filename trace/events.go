package trace

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/salsaopt/salsa/schedule"
)

// EventsHeader is the first line of an *.events.csv file.
const EventsHeader = "step,kind,details..."

// column is one typed cell of an event row; ptr returns a *float64, *int,
// *bool or *string into the event.
type column struct {
	name string
	ptr  func(e *schedule.Event) any
}

func fcol(name string, p func(*schedule.Event) *float64) column {
	return column{name, func(e *schedule.Event) any { return p(e) }}
}
func icol(name string, p func(*schedule.Event) *int) column {
	return column{name, func(e *schedule.Event) any { return p(e) }}
}
func bcol(name string, p func(*schedule.Event) *bool) column {
	return column{name, func(e *schedule.Event) any { return p(e) }}
}
func scol(name string, p func(*schedule.Event) *string) column {
	return column{name, func(e *schedule.Event) any { return p(e) }}
}

var (
	colMean       = fcol("mean", func(e *schedule.Event) *float64 { return &e.Mean })
	colLower      = fcol("lower", func(e *schedule.Event) *float64 { return &e.Lower })
	colUpper      = fcol("upper", func(e *schedule.Event) *float64 { return &e.Upper })
	colStationary = bcol("stationary", func(e *schedule.Event) *bool { return &e.Stationary })
	colCount      = icol("count", func(e *schedule.Event) *int { return &e.Count })
	colStd        = fcol("std", func(e *schedule.Event) *float64 { return &e.Std })
	colDof        = icol("dof", func(e *schedule.Event) *int { return &e.Dof })
	colReason     = scol("reason", func(e *schedule.Event) *string { return &e.Reason })
	colNewLR      = fcol("new_lr", func(e *schedule.Event) *float64 { return &e.NewLR })
)

// eventColumns lists, per kind, the columns after `step,kind`.
var eventColumns = map[schedule.Kind][]column{
	schedule.KindTest: {colMean, colLower, colUpper, colStationary,
		bcol("composite", func(e *schedule.Event) *bool { return &e.Composite }),
		colCount,
		fcol("mean1", func(e *schedule.Event) *float64 { return &e.Mean1 }),
		fcol("mean2", func(e *schedule.Event) *float64 { return &e.Mean2 }),
		colStd, colDof},
	schedule.KindSlopeTest: {
		fcol("slope", func(e *schedule.Event) *float64 { return &e.Slope }),
		fcol("prob", func(e *schedule.Event) *float64 { return &e.Prob }),
		bcol("decreasing", func(e *schedule.Event) *bool { return &e.Decreasing }),
		colCount},
	// A drop's reason is not a column: the reference rows are step,drop,new_lr.
	schedule.KindDrop:   {colNewLR},
	schedule.KindSwitch: {colReason},
	schedule.KindDecay:  {colNewLR, colReason},
	schedule.KindProbe: {colMean, fcol("prev", func(e *schedule.Event) *float64 { return &e.Prev }),
		bcol("accept", func(e *schedule.Event) *bool { return &e.Accept }), colCount, colNewLR, colReason},
	schedule.KindAverage: {colCount, colMean, colStd, fcol("z", func(e *schedule.Event) *float64 { return &e.Z }),
		bcol("accept", func(e *schedule.Event) *bool { return &e.Accept }), colReason},
	schedule.KindEquivalenceTest: {colMean, colLower, colUpper,
		fcol("margin", func(e *schedule.Event) *float64 { return &e.Margin }),
		colStationary, colCount, colStd, colDof},
	schedule.KindValidation: {
		fcol("val_loss", func(e *schedule.Event) *float64 { return &e.ValLoss }),
		fcol("best", func(e *schedule.Event) *float64 { return &e.BestLoss }),
		icol("bad", func(e *schedule.Event) *int { return &e.Bad })},
}

// checkReason reports whether s can stand in a CSV cell unquoted.
func checkReason(s string) error {
	if strings.ContainsAny(s, ",\"\r\n") {
		return fmt.Errorf("reason %q: must not contain a comma, a quote or a line break", s)
	}
	return nil
}

// appendEvent appends ev as one events line, without the newline, to dst.
func appendEvent(dst []byte, ev schedule.Event) ([]byte, error) {
	dst = appendInt(dst, ev.Step)
	dst = append(dst, ',')
	dst = append(dst, ev.Kind.String()...)
	cols, ok := eventColumns[ev.Kind]
	if !ok {
		return dst, fmt.Errorf("trace: step %d: unknown event kind %d", ev.Step, int(ev.Kind))
	}
	var err error
	for _, c := range cols {
		switch p := c.ptr(&ev).(type) {
		case *float64:
			dst = AppendFloat(append(dst, ','), *p)
		case *int:
			dst = appendInt(append(dst, ','), *p)
		case *bool:
			dst = appendBool(append(dst, ','), *p)
		case *string:
			if e := checkReason(*p); e != nil && err == nil {
				err = fmt.Errorf("trace: step %d: %s: %w", ev.Step, ev.Kind, e)
			}
			dst = append(append(dst, ','), *p...)
		}
	}
	return dst, err
}

// EventColumns lists the columns of an events row of kind k after step and
// kind (for a test: mean, lower, upper, ...); nil for an unknown kind.
func EventColumns(k schedule.Kind) []string {
	var names []string
	for _, c := range eventColumns[k] {
		names = append(names, c.name)
	}
	return names
}

// FormatEvent formats ev as one events line, without the newline. An event
// that [WriteEvents] rejects (unknown kind, a reason with a comma) is still
// formatted, but does not parse back.
func FormatEvent(ev schedule.Event) string {
	b, _ := appendEvent(nil, ev)
	return string(b)
}

// EventWriter writes an events file one event at a time.
type EventWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewEventWriter returns a writer that has written the header to w.
func NewEventWriter(w io.Writer) (*EventWriter, error) {
	ew := &EventWriter{w: bufio.NewWriter(w), buf: make([]byte, 0, 256)}
	if _, err := ew.w.WriteString(EventsHeader + "\n"); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return ew, nil
}

// Write writes one event. It rejects an unknown kind and a reason that
// contains a comma, a quote or a line break, and then writes nothing.
func (ew *EventWriter) Write(ev schedule.Event) error {
	b, err := appendEvent(ew.buf[:0], ev)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	ew.buf = b
	if _, err := ew.w.Write(b); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

// Flush writes any buffered events to the underlying writer.
func (ew *EventWriter) Flush() error {
	if err := ew.w.Flush(); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

// WriteEvents writes the header and one row per event.
func WriteEvents(w io.Writer, evs []schedule.Event) error {
	ew, err := NewEventWriter(w)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := ew.Write(ev); err != nil {
			return err
		}
	}
	return ew.Flush()
}

// ReadEvents reads an events file written by statopt's recorder or by
// [WriteEvents]. NaN and ±Inf cells are accepted (see the package doc).
// On error it also returns the events before the bad line.
func ReadEvents(r io.Reader) ([]schedule.Event, error) {
	lr := newLineReader(r)
	if _, err := lr.header(EventsHeader); err != nil {
		return nil, err
	}
	var evs []schedule.Event
	var cells []string
	names := make([]string, 0, 12)
	for {
		line, ok, err := lr.next()
		if err != nil {
			return evs, err
		}
		if !ok {
			return evs, nil
		}
		cells = split(cells, line)
		if len(cells) < 2 {
			return evs, &ParseError{Line: lr.line, Err: fmt.Errorf("%d columns, want step,kind,...", len(cells))}
		}
		var ev schedule.Event
		names = append(names[:0], "step", "kind")
		if ev.Step, err = parseInt(cells[0]); err != nil {
			return evs, cellError(lr.line, 0, names[:2], err)
		}
		if ev.Kind, err = schedule.ParseKind(cells[1]); err != nil {
			return evs, cellError(lr.line, 1, names[:2], fmt.Errorf("unknown event kind %q", cells[1]))
		}
		cols := eventColumns[ev.Kind]
		for _, c := range cols {
			names = append(names, c.name)
		}
		want := 2 + len(cols)
		if n := len(cells); n != want {
			return evs, &ParseError{Line: lr.line,
				Err: fmt.Errorf("%d columns, want %d for kind %s (%s)", n, want, ev.Kind, strings.Join(names, ","))}
		}
		for i, s := range cells[2:] {
			var err error
			switch p := cols[i].ptr(&ev).(type) {
			case *float64:
				*p, err = parseFloat(s)
			case *int:
				*p, err = parseInt(s)
			case *bool:
				*p, err = parseBool(s)
			case *string:
				*p, err = s, checkReason(s)
			}
			if err != nil {
				return evs, cellError(lr.line, i+2, names, err)
			}
		}
		evs = append(evs, ev)
	}
}

// ReadEventsFile reads the events in the named file (see [ReadEvents]).
func ReadEventsFile(path string) ([]schedule.Event, error) {
	return readFile(path, ReadEvents)
}
