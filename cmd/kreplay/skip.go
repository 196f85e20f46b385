package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// skipReason is the error of a signature -skip leaves unmeasured.
const skipReason = "not measured: left out with -skip"

// skipFlagUsage is the -skip flag's help, the same for run and predict.
const skipFlagUsage = "leave these signature `IDS` (comma-separated) unmeasured, each with the reason in its place in the results:\n" +
	"the signature whose replay faulted and lost the CUDA context, say, when the run goes on with -resume"

// parseSkip parses -skip's comma-separated signature IDs into the
// replay.SuiteOptions.Skip of sets, nil for none. Each must name a
// signature of one of sets (an error names one that does not) and not
// one that is part of another, which replays with it (the error names
// that one). binaries says whether a signature with a captured binary
// replays by it (-binaries), which makes a part stand alone.
func parseSkip(arg string, sets []*signatures.Set, binaries bool) (map[string]string, error) {
	var skip map[string]string
	for _, id := range strings.Split(arg, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		var found *signatures.Signature
		for _, set := range sets {
			if s := set.ByID(id); s != nil && (found == nil || found.PartOf != "") {
				found = s
			}
		}
		if found == nil {
			files := make([]string, len(sets))
			for i, set := range sets {
				files[i] = set.Source.File
			}
			return nil, fmt.Errorf("-skip %s: no signature %s in %s", arg, id, strings.Join(files, ", "))
		}
		partOf := found.PartOf
		if !binaries && found.Binary != nil {
			partOf = found.Binary.PartOf
		}
		if partOf != "" {
			return nil, fmt.Errorf("-skip %s: signature %s is part of %s and replays with it: skip %s", arg, id, partOf, partOf)
		}
		if skip == nil {
			skip = map[string]string{}
		}
		skip[id] = skipReason
	}
	return skip, nil
}

// lostError is the error of a command whose replays lost the CUDA context
// (replay.Device.Lost; lost holds those errors, nil for devices that kept
// theirs), nil when none did. It says which signature faulted, how many
// after it were not measured and how to go on: run again, leaving out
// the signatures that faulted (and those -skip already left out) and,
// where resume says the command can, reusing the results measured.
func lostError(lost []error, resume bool) error {
	var what, skip []string
	n := 0
	for _, err := range lost {
		var le *replay.ContextLostError
		if !errors.As(err, &le) {
			continue
		}
		what = append(what, err.Error())
		n += le.NotMeasured
		skip = append(skip, le.Skip...)
	}
	if len(what) == 0 {
		return nil
	}
	slices.Sort(skip)
	ids := strings.Join(slices.Compact(skip), ",")
	it := "it"
	if len(what) > 1 {
		it = "them"
	}
	after := fmt.Sprintf("%d signatures after %s were not measured", n, it)
	if n == 1 {
		after = fmt.Sprintf("1 signature after %s was not measured", it)
	}
	how := "run again with -resume -skip " + ids
	if !resume {
		how = "run again with -skip " + ids + " (with -out FILE, -resume would reuse the results measured)"
	}
	return &contextLost{msg: fmt.Sprintf("%s; %s; %s", strings.Join(what, "; "), after, how), skip: ids, resume: resume}
}

// contextLost is lostError's error: its message, the signatures to leave
// out of a new run and whether that run can reuse the results measured.
type contextLost struct {
	msg    string
	skip   string
	resume bool
}

func (e *contextLost) Error() string { return e.msg }
