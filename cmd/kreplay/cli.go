package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Exit statuses, as usageText lists them (and the README).
const (
	exitOK            = 0
	exitError         = 1
	exitUsage         = 2
	exitNoMeasurement = 3
)

// exitText is the usage text's paragraph on exit statuses.
const exitText = `exit status:
  0  done
  1  an error, said on standard error (with several inputs, the good ones are still processed),
     or a replay that faulted on the GPU and lost the CUDA context where the command could not
     go on in a new process
  2  a usage error: an unknown command or flag, a flag value that does not parse or is out of
     range, the wrong number of arguments (one line says which, then where the usage is)
  3  nothing was measured: run, predict, whatif and capture found no usable GPU or driver
     (predict and whatif do their CPU part first)`

// argsText is the usage text's paragraph on the arguments' names.
const argsText = `arguments:
  TRACE   a PyTorch profiler (Kineto) trace, .json or .json.gz, or embedded:NAME, one embedded in kreplay
  SET     a signature set: kreplay import's JSON
  BUNDLE  a directory kreplay capture wrote, or embedded:NAME (the embedded bundles: %s)
  BENCH   go test -bench output: kreplay predict's, or a generated package's; plain or gzip, - for standard input
  SPEC    a workload spec (JSON)
  DIR     a directory;  FILE  an output file;  ID  a signature ID`

// usageError is a command line kreplay does not take: an unknown command
// or flag, a flag value that does not parse or is out of range, or the
// wrong number of arguments. It exits with status exitUsage after one
// line that says so.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// helpRequest is what parsing a command's flags returns for -h or
// -help: run prints the command's help, with fs's flags, on standard
// output.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// errNothingMeasured says a command measured nothing for want of a usable
// GPU: exit status exitNoMeasurement, so that a script can tell it from
// an error and from a prediction. noGPU's errors wrap it.
var errNothingMeasured = errors.New("nothing was measured")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageExit(stderr, "kreplay", "no command given", "kreplay help")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	c := lookup(args[0])
	if c == nil {
		return usageExit(stderr, "kreplay", fmt.Sprintf("unknown command %q", args[0]), "kreplay help")
	}
	return exitStatus(c, c.run(args[1:], stdout, stderr), args[1:], stdout, stderr)
}

// exitStatus says what err, c's result, means on stderr (the help on
// stdout) and returns the exit status.
func exitStatus(c *command, err error, args []string, stdout, stderr io.Writer) int {
	var h *helpRequest
	var u *usageError
	var lost *contextLost
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &h):
		commandHelp(stdout, c, h.fs)
		return exitOK
	case errors.As(err, &u):
		return usageExit(stderr, "kreplay "+c.name, u.msg, "kreplay "+c.name+" -h")
	case errors.Is(err, errNothingMeasured):
		fmt.Fprintf(stderr, "kreplay %s: %v (exit status %d)\n", c.name, err, exitNoMeasurement)
		return exitNoMeasurement
	case errors.As(err, &lost):
		fmt.Fprintf(stderr, "kreplay %s: %v\n", c.name, err)
		if code, ok := goOn(c.name, args, lost, stdout, stderr); ok {
			return code
		}
		return exitError
	}
	fmt.Fprintf(stderr, "kreplay %s: %v\n", c.name, err)
	return exitError
}

// usageExit writes a usage error's line and where the usage is, and
// returns exitUsage.
func usageExit(stderr io.Writer, who, msg, helpCmd string) int {
	fmt.Fprintf(stderr, "%s: %s\nrun '%s' for usage\n", who, msg, helpCmd)
	return exitUsage
}

// help is kreplay help [COMMAND]: the general help, or the command's (as
// its -h prints it).
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return exitOK
	case len(args) > 1:
		return usageExit(stderr, "kreplay help", fmt.Sprintf("want at most one COMMAND, got %d arguments", len(args)), "kreplay help")
	}
	c := lookup(args[0])
	switch {
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		usage(stdout)
		return exitOK
	case c == nil:
		return usageExit(stderr, "kreplay help", fmt.Sprintf("unknown command %q", args[0]), "kreplay help")
	case c.run == nil:
		usage(stdout)
		return exitOK
	}
	return exitStatus(c, c.run([]string{"-h"}, stdout, stderr), nil, stdout, stderr)
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// usage writes the general help: the commands, the arguments' names and
// the exit statuses.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kreplay COMMAND [ARGS]\n\nkreplay predicts the time and energy of LLM inference on NVIDIA GPUs from isolated kernel replays.\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "%s\n           %s\n", strings.TrimRight(fmt.Sprintf("  %-8s %s", c.name, c.args), " "), c.help)
	}
	fmt.Fprintf(w, "\n"+argsText+"\n\n%s\n\nRun 'kreplay COMMAND -h' (or 'kreplay help COMMAND') for a command's flags.\n",
		strings.Join(embeddedBundles(), ", "), exitText)
}

// commandHelp writes c's help: what it takes and does, its flags and the
// exit statuses.
func commandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s\n", strings.TrimRight("usage: kreplay "+c.name+" "+c.args, " "), strings.ReplaceAll(c.help, "\n           ", "\n"))
	if fs != nil && hasFlags(fs) {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	fmt.Fprintf(w, "\n%s\n", exitText)
}

// hasFlags reports whether fs defines any flag.
func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// newFlags returns a command's flag set: it writes nothing itself, and
// parseInterspersed turns its errors into usage errors and -h into a
// helpRequest.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("kreplay "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags that may follow positional arguments and checks
// that lo to hi of those remain (hi < 0: no bound), a usage error
// otherwise; with none and dflt given, the positional arguments are dflt.
func parseArgs(fs *flag.FlagSet, args []string, lo, hi int, dflt ...string) ([]string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 && len(dflt) > 0 {
		return dflt, nil
	}
	if len(dflt) > 0 {
		lo = 0 // none is the default
	}
	if len(pos) < lo || hi >= 0 && len(pos) > hi {
		return nil, usagef("%s, got %d", wantArgs(lo, hi), len(pos))
	}
	return pos, nil
}

// wantArgs says how many arguments a command takes: "want 1 argument".
func wantArgs(lo, hi int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case lo == hi:
		return "want " + plural(lo)
	case hi < 0:
		return "want at least " + plural(lo)
	case lo == 0:
		return "want at most " + plural(hi)
	}
	return fmt.Sprintf("want %d to %d arguments", lo, hi)
}

// parseInterspersed parses flags that may follow positional arguments,
// and applies -causal-scores where the command has it. A flag that is
// not defined, whose value does not parse or is negative (checkSigns) is
// a usage error; -h or -help, a helpRequest.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs}
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			if err := checkSigns(fs); err != nil {
				return nil, err
			}
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// checkSigns rejects a negative (or NaN) value of a numeric flag the
// command line set: no kreplay flag takes one. Each command checks the
// ranges of its own flags beyond that.
func checkSigns(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		neg := false
		switch v := g.Get().(type) {
		case int:
			neg = v < 0
		case int64:
			neg = v < 0
		case float64:
			neg = v < 0 || math.IsNaN(v)
		case time.Duration:
			neg = v < 0
		}
		if neg {
			err = usagef("-%s %s: want 0 or more", f.Name, f.Value)
		}
	})
	return err
}
