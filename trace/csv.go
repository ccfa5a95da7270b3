package trace

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
)

// maxLine bounds the length of one line; a longer line is an error.
const maxLine = 1 << 20

// ParseError reports malformed input, naming the line and column.
type ParseError struct {
	File   string // the file name, when known
	Line   int    // 1-based; the header is line 1
	Column int    // 1-based; 0 when the error concerns the whole line
	Name   string // the column's name, when known
	Err    error
}

func (e *ParseError) Error() string {
	s := "trace: "
	if e.File != "" {
		s += e.File + ": "
	}
	s += fmt.Sprintf("line %d", e.Line)
	if e.Column > 0 {
		s += fmt.Sprintf(", column %d", e.Column)
		if e.Name != "" {
			s += " (" + e.Name + ")"
		}
	}
	return s + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// cellError reports err in the 0-based column col of line, named by names.
func cellError(line, col int, names []string, err error) error {
	e := &ParseError{Line: line, Column: col + 1, Err: err}
	if col < len(names) {
		e.Name = names[col]
	}
	return e
}

// lineReader yields the lines of a text stream without their "\n" or "\r\n".
type lineReader struct {
	sc   *bufio.Scanner
	line int
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lineReader{sc: sc}
}

// next returns the next line; ok is false at the end of input or on error,
// which err then reports.
func (lr *lineReader) next() (line string, ok bool, err error) {
	if !lr.sc.Scan() {
		if err := lr.sc.Err(); err != nil {
			return "", false, &ParseError{Line: lr.line + 1, Err: err}
		}
		return "", false, nil
	}
	lr.line++
	return string(lr.sc.Bytes()), true, nil
}

// header reads line 1 and checks that it is exactly one of want (at least
// one), which it returns.
func (lr *lineReader) header(want ...string) (string, error) {
	line, ok, err := lr.next()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &ParseError{Line: 1, Err: fmt.Errorf("missing header %q", want[0])}
	}
	if !slices.Contains(want, line) {
		w := fmt.Sprintf("%q", want[0])
		for _, h := range want[1:] {
			w += fmt.Sprintf(" or %q", h)
		}
		return "", &ParseError{Line: 1, Err: fmt.Errorf("header is %q, want %s", line, w)}
	}
	return line, nil
}

// split cuts line at commas into dst[:0].
func split(dst []string, line string) []string {
	dst = dst[:0]
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == ',' {
			dst = append(dst, line[start:i])
			start = i + 1
		}
	}
	return append(dst, line[start:])
}

// maybeGunzip returns a reader of the decompressed stream if r starts with
// the gzip magic bytes 1f 8b, else of r itself.
func maybeGunzip(r io.Reader) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("trace: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("trace: gzip: %w", err)
		}
		return zr, zr.Close, nil
	}
	return br, func() error { return nil }, nil
}
