package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Info is what a binary records of its build: the main module's path and
// version, the VCS revision and commit time it was built from (empty
// when not built from a checkout), whether the checkout had uncommitted
// changes, and the Go version.
type Info struct {
	Path, Version  string
	Revision, Time string
	Modified       bool
	GoVersion      string
}

// Read returns the running binary's Info; without build information
// (a binary built without module support) the path and version are
// "unknown".
func Read() Info {
	in := Info{Path: "unknown", Version: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	in.Path, in.Version, in.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Write writes the Info in lines of "key value": module, version,
// revision and time (those known) and go.
func (in Info) Write(w io.Writer) error {
	rev := in.Revision
	if rev != "" && in.Modified {
		rev += " (modified)"
	}
	lines := [][2]string{{"module", in.Path}, {"version", in.Version}, {"revision", rev}, {"time", in.Time}, {"go", in.GoVersion}}
	for _, l := range lines {
		if l[1] == "" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%-8s %s\n", l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}
