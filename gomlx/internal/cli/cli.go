// Package cli implements the salsa command. Main is the whole program, so
// tests run it in-process.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// errUsage marks an error whose message is the usage already printed.
var errUsage = errors.New("usage")

// Main runs the salsa command with args (without the program name) and
// returns the exit status: 0 on success, 2 on a usage error, 1 otherwise.
//
// Help (salsa help, salsa help COMMAND, salsa COMMAND -h) goes to stdout;
// errors go to stderr, a usage error as one line and a hint.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	name := args[0]
	if name == "help" {
		if len(args) > 2 {
			fmt.Fprintf(stderr, "salsa help: %q: give one command, as in 'salsa help %s'\n", strings.Join(args[1:], " "), args[1])
			return 2
		}
		if args[1] == "help" {
			usage(stdout)
			return 0
		}
		name, args = args[1], []string{args[1], "-h"}
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "salsa: unknown command %q\nRun 'salsa help' for the commands.\n", name)
		return 2
	}
	errOut := stderr
	for _, a := range args[1:] {
		if a == "-h" || a == "-help" || a == "--help" {
			errOut = stdout // the help is what was asked for
		}
	}
	err := c.run(args[1:], stdout, errOut)
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "salsa %s: %v\n", name, err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: salsa COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'salsa help COMMAND' for a command's flags.")
}

// newFlags returns a flag set that reports usage errors as errUsage.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("salsa "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// setUsage makes -h print text (the usage lines, then what the command
// does) followed by the flags and their defaults.
func setUsage(fs *flag.FlagSet, text string) {
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), text)
		fs.PrintDefaults()
	}
}

// parse parses the flags. A usage error is printed as one line and a hint
// (not the whole usage, which would scroll it away) and returned as
// errUsage; -h prints the usage and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err != nil {
		return usageError(fs, flagValueError(fs, err))
	}
	return nil
}

// badValue matches the flag package's errors for a value that does not
// parse: `invalid value "X" for flag -NAME: parse error`, or `invalid
// boolean value "X" for -NAME: ...`.
var badValue = regexp.MustCompile(`^invalid (?:boolean )?value ("[^"]*") for (?:flag )?-([\w-]+): (.*)$`)

// flagValueError rewrites the flag package's error for a value that does
// not parse ("parse error") so that it names the flag, the value and what
// the flag takes; other errors are returned as they are.
func flagValueError(fs *flag.FlagSet, err error) string {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	f := fs.Lookup(m[2])
	if f == nil {
		return err.Error()
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	var want string
	switch g.Get().(type) {
	case bool:
		want = "true or false (1 or 0)"
	case int, int64:
		want = "an integer" // the command checks its range
		if m[3] == "value out of range" {
			// the flag package parses an int flag at int's size
			lo, hi := int64(math.MinInt), int64(math.MaxInt)
			if _, is64 := g.Get().(int64); is64 {
				lo, hi = math.MinInt64, math.MaxInt64
			}
			want = fmt.Sprintf("an integer in [%d, %d]", lo, hi)
		}
	case uint, uint64:
		want = fmt.Sprintf("an integer in [0, %d]", uint64(math.MaxUint64))
	case float64:
		want = "a number"
	default:
		return err.Error()
	}
	if m[3] != "parse error" {
		want += " (" + m[3] + ")"
	}
	return fmt.Sprintf("--%s %s: must be %s", m[2], m[1], want)
}

// usageError prints msg and a hint to the flag set's output and returns
// errUsage.
func usageError(fs *flag.FlagSet, msg string) error {
	cmd := strings.TrimPrefix(fs.Name(), "salsa ")
	fmt.Fprintf(fs.Output(), "%s: %s\nRun 'salsa help %s' for its flags.\n", fs.Name(), msg, cmd)
	return errUsage
}

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want key=value", v)
	}
	for _, kv := range s.pairs() {
		if kv[0] == strings.TrimSpace(k) {
			return fmt.Errorf("%q: %s given twice (%s before): give each key once", v, kv[0], kv[1])
		}
	}
	*s = append(*s, v)
	return nil
}

func (s setFlags) pairs() [][2]string {
	var out [][2]string
	for _, kv := range s {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}
