package tool

// Java-side wording and formats the tools print: uncaught exceptions,
// NoSuchFileException, new String(bytes, UTF_8) and Double.toString.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JavaException is a failure Kafka's tool reports as an uncaught exception.
type JavaException struct{ Class, Msg string }

func (e JavaException) Error() string {
	return fmt.Sprintf("Exception in thread \"main\" %s: %s", e.Class, e.Msg)
}

// NoSuchFile words a failed file open as Java's NIO does:
// NoSuchFileException with the path for a missing file, IOException else.
func NoSuchFile(file string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return JavaException{"java.nio.file.NoSuchFileException", file}
	}
	return JavaException{"java.io.IOException", err.Error()}
}

// JavaString decodes bytes as Java's new String(bytes, UTF_8) does: each
// malformed byte becomes U+FFFD.
func JavaString(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	var sb strings.Builder
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		sb.WriteRune(r) // utf8.RuneError is U+FFFD
		p = p[n:]
	}
	return sb.String()
}

// JavaDouble formats f as Java's Double.toString does for the values the
// tools print (plain decimals between 1e-3 and 1e7, at least one fraction
// digit; scientific notation outside).
func JavaDouble(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		if exp[0] == '+' {
			exp = exp[1:]
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
