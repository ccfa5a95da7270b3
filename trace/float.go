package trace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatFloat formats f as Python 3's repr(float) does: the shortest digits
// that round-trip, in fixed notation with at least one digit after the point
// when the decimal exponent e satisfies −4 ≤ e < 16 ("1.0", "0.0001",
// "1234567.0"), else in scientific notation with a signed, at least two-digit
// exponent ("1e-05", "2.809295934608976e-12", "1e+16"); "nan", "inf",
// "-inf" and "-0.0" for the special values.
func FormatFloat(f float64) string {
	var b [32]byte
	return string(AppendFloat(b[:0], f))
}

// AppendFloat appends [FormatFloat](f) to dst.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	// Shortest round-trip digits as d[.ddd]e±XX; Go writes the exponent with
	// a sign and at least two digits, as Python does.
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	i := 0
	if s[0] == '-' {
		dst = append(dst, '-')
		i = 1
	}
	ePos := i + 1
	for s[ePos] != 'e' {
		ePos++
	}
	exp := 0
	for _, c := range s[ePos+2:] {
		exp = 10*exp + int(c-'0')
	}
	if s[ePos+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		return append(dst, s[i:]...)
	}
	// Fixed notation from the digits d₁d₂…dₙ and the exponent.
	var dbuf [20]byte
	digits := append(dbuf[:0], s[i])
	if ePos > i+1 {
		digits = append(digits, s[i+2:ePos]...)
	}
	if exp < 0 {
		dst = append(dst, "0."...)
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	if len(digits) <= exp+1 {
		dst = append(dst, digits...)
		for k := len(digits); k < exp+1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:]...)
}

// parseFloat parses a decimal float cell. It accepts what strconv.ParseFloat
// accepts except hexadecimal mantissas, underscores and out-of-range values.
func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("empty cell")
	}
	if strings.ContainsAny(s, "xX_pP") {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is out of the float64 range", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// parseInt parses a plain decimal integer: an optional '-' and digits.
func parseInt(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty cell")
	}
	if s[0] == '+' {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is out of the int range", s)
		}
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

// parseBool parses "0" or "1".
func parseBool(s string) (bool, error) {
	switch s {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("%q is not a boolean (0 or 1)", s)
}

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, '1')
	}
	return append(dst, '0')
}
