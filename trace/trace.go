package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// TraceHeader is the first line of a *.trace.csv file.
const TraceHeader = "step,lr,loss,x1d,d2,eta"

// StepSizeHeader is the header of a trace with this package's seventh
// column, step_size: the step a learning-rate-free or schedule-free method
// took ([Row.StepSize]). salsa writes it in the steps.csv of the peers whose
// step size is partly their own (direction.LRAware); the reference traces
// never have it.
const StepSizeHeader = TraceHeader + ",step_size"

// X2Header is the header of a trace with the seventh column x2:
// ‖x_{k+1}‖² ([Row.X2]). salsa writes it in the steps.csv of a run whose
// scheduler reads ‖x_{k+1}‖² (schedule.NormAsker: salsa-probe with
// probe_norm_cap=1), with a cell at each step where it was read, so that
// the run can be replayed; the reference traces never have it.
const X2Header = TraceHeader + ",x2"

var (
	traceColumns = [...]string{"step", "lr", "loss", "x1d", "d2", "eta", "step_size"}
	x2Columns    = [...]string{"step", "lr", "loss", "x1d", "d2", "eta", "x2"}
)

// Row is one optimizer step of a trace.
type Row struct {
	Step   int     // k, 1-based: statopt's nSteps after the update
	LR     float64 // α_k, the learning rate of the update x_{k+1} = x_k − α_k·d_k
	Loss   float64 // f_ξk(x_k) plus the L2 term (statopt's f0 when a line search ran)
	X1D    float64 // ⟨x_{k+1}, d_k⟩
	D2     float64 // ‖d_k‖², not scaled by α/2
	Eta    float64 // the line-search step η that was smoothed into LR; meaningful if HasEta
	HasEta bool    // false when no line search ran (an empty eta cell)
	// StepSize is the step the direction took on top of α_k, in the terms
	// its paper logs (direction.LRAware.EffectiveLR: Prodigy's α_k·d_k,
	// DoG's α_k·η_t, ...); meaningful if HasStepSize. Only a trace with
	// [StepSizeHeader] has the column, and there an empty cell is
	// HasStepSize false.
	StepSize    float64
	HasStepSize bool
	// X2 is ‖x_{k+1}‖², meaningful if HasX2. Only a trace with [X2Header]
	// has the column, and there an empty cell is HasX2 false.
	X2    float64
	HasX2 bool
}

// ReadTrace reads a trace, gzip-compressed (detected by its magic bytes
// 1f 8b) or plain, with the header [TraceHeader], [StepSizeHeader] or
// [X2Header]; every
// row has the header's number of columns. NaN and ±Inf cells are accepted
// (see the package doc).
// On error it also returns the rows before the bad line.
func ReadTrace(r io.Reader) ([]Row, error) {
	zr, closeZ, err := maybeGunzip(r)
	if err != nil {
		return nil, err
	}
	rows, err := readTrace(zr)
	if cerr := closeZ(); err == nil && cerr != nil {
		err = fmt.Errorf("trace: gzip: %w", cerr)
	}
	return rows, err
}

func readTrace(r io.Reader) ([]Row, error) {
	lr := newLineReader(r)
	h, err := lr.header(TraceHeader, StepSizeHeader, X2Header)
	if err != nil {
		return nil, err
	}
	ncol, names := len(traceColumns)-1, traceColumns[:]
	switch h {
	case StepSizeHeader:
		ncol++
	case X2Header:
		ncol, names = ncol+1, x2Columns[:]
	}
	var rows []Row
	cells := make([]string, 0, len(traceColumns))
	for {
		line, ok, err := lr.next()
		if err != nil {
			return rows, err
		}
		if !ok {
			return rows, nil
		}
		cells = split(cells, line)
		if len(cells) != ncol {
			return rows, &ParseError{Line: lr.line,
				Err: fmt.Errorf("%d columns, want %d (%s)", len(cells), ncol, h)}
		}
		var row Row
		if row.Step, err = parseInt(cells[0]); err != nil {
			return rows, cellError(lr.line, 0, names, err)
		}
		for col := 1; col <= 4; col++ {
			f, err := parseFloat(cells[col])
			if err != nil {
				return rows, cellError(lr.line, col, names, err)
			}
			switch col {
			case 1:
				row.LR = f
			case 2:
				row.Loss = f
			case 3:
				row.X1D = f
			case 4:
				row.D2 = f
			}
		}
		if cells[5] != "" {
			if row.Eta, err = parseFloat(cells[5]); err != nil {
				return rows, cellError(lr.line, 5, names, err)
			}
			row.HasEta = true
		}
		if ncol > 6 && cells[6] != "" {
			f, err := parseFloat(cells[6])
			if err != nil {
				return rows, cellError(lr.line, 6, names, err)
			}
			if h == X2Header {
				row.X2, row.HasX2 = f, true
			} else {
				row.StepSize, row.HasStepSize = f, true
			}
		}
		rows = append(rows, row)
	}
}

// ReadTraceFile reads the trace in the named file (see [ReadTrace]).
func ReadTraceFile(path string) ([]Row, error) {
	return readFile(path, ReadTrace)
}

// TraceWriter writes a trace one row per step. Its output is plain text; wrap
// the destination in a gzip.Writer for a *.trace.csv.gz.
type TraceWriter struct {
	w        *bufio.Writer
	buf      []byte
	stepSize bool // the writer's header is StepSizeHeader
	x2       bool // the writer's header is X2Header
}

// NewTraceWriter returns a writer that has written [TraceHeader] to w.
func NewTraceWriter(w io.Writer) (*TraceWriter, error) { return newTraceWriter(w, TraceHeader) }

// NewStepSizeTraceWriter returns a writer that has written [StepSizeHeader]
// to w: its rows have the step_size column.
func NewStepSizeTraceWriter(w io.Writer) (*TraceWriter, error) {
	return newTraceWriter(w, StepSizeHeader)
}

// NewX2TraceWriter returns a writer that has written [X2Header] to w: its
// rows have the x2 column.
func NewX2TraceWriter(w io.Writer) (*TraceWriter, error) { return newTraceWriter(w, X2Header) }

func newTraceWriter(w io.Writer, h string) (*TraceWriter, error) {
	t := &TraceWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 128), stepSize: h == StepSizeHeader, x2: h == X2Header}
	if _, err := t.w.WriteString(h + "\n"); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return t, nil
}

// Write writes one row. Eta is written only when HasEta is true; otherwise the
// cell is empty and Eta is ignored. StepSize is written likewise, by a
// writer from [NewStepSizeTraceWriter], and X2 by one from
// [NewX2TraceWriter]; a writer returns an error for a row with a value its
// header has no column for.
func (t *TraceWriter) Write(r Row) error {
	var b []byte
	switch {
	case r.HasStepSize && !t.stepSize:
		return fmt.Errorf("trace: step %d: the row has a step size and the header no step_size column: use NewStepSizeTraceWriter", r.Step)
	case r.HasX2 && !t.x2:
		return fmt.Errorf("trace: step %d: the row has ‖x_{k+1}‖² and the header no x2 column: use NewX2TraceWriter", r.Step)
	case t.stepSize:
		b = AppendStepSizeRow(t.buf[:0], r)
	case t.x2:
		b = AppendX2Row(t.buf[:0], r)
	default:
		b = AppendRow(t.buf[:0], r)
	}
	b = append(b, '\n')
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		return fmt.Errorf("trace: step %d: %w", r.Step, err)
	}
	return nil
}

// Flush writes any buffered rows to the underlying writer.
func (t *TraceWriter) Flush() error {
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

// AppendRow appends r as one trace line of [TraceHeader], without the
// newline, to dst; StepSize and X2 are not written (see
// [AppendStepSizeRow] and [AppendX2Row]).
func AppendRow(dst []byte, r Row) []byte {
	dst = appendInt(dst, r.Step)
	for _, f := range [...]float64{r.LR, r.Loss, r.X1D, r.D2} {
		dst = append(dst, ',')
		dst = AppendFloat(dst, f)
	}
	dst = append(dst, ',')
	if r.HasEta {
		dst = AppendFloat(dst, r.Eta)
	}
	return dst
}

// AppendStepSizeRow appends r as one line of [StepSizeHeader]: [AppendRow]'s
// cells and step_size, empty unless HasStepSize.
func AppendStepSizeRow(dst []byte, r Row) []byte {
	return appendSeventh(dst, r, r.HasStepSize, r.StepSize)
}

// AppendX2Row appends r as one line of [X2Header]: [AppendRow]'s cells and
// x2, empty unless HasX2.
func AppendX2Row(dst []byte, r Row) []byte { return appendSeventh(dst, r, r.HasX2, r.X2) }

// appendSeventh appends [AppendRow]'s cells and a seventh, v, empty unless
// has.
func appendSeventh(dst []byte, r Row, has bool, v float64) []byte {
	dst = append(AppendRow(dst, r), ',')
	if has {
		dst = AppendFloat(dst, v)
	}
	return dst
}

// readFile opens path and reads it with read; a ParseError names the file.
func readFile[T any](path string, read func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	rows, err := read(f)
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.File = path
	}
	return rows, err
}
