package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// envGoOn counts the new processes a run has gone on in after losing the
// CUDA context (goOn); at maxGoOn it goes on no more, and setting it to
// maxGoOn keeps a run from going on at all.
const (
	envGoOn = "KREPLAY_LOST_CONTEXTS"
	maxGoOn = 3
)

// goOn measures what a run whose replay lost the CUDA context left
// unmeasured: it runs the same command again in a new process (a lost
// context cannot be recovered in this one), with -resume and -skip for
// the signatures that faulted, its output going where this one's goes. It
// returns the new process's exit status, and false where it did not go on:
// the command cannot reuse its results (run without -out), the runs
// already went on maxGoOn times, or the new process could not start.
func goOn(name string, args []string, lost *contextLost, stdout, stderr io.Writer) (int, bool) {
	if !lost.resume {
		return 0, false
	}
	n, _ := strconv.Atoi(os.Getenv(envGoOn))
	if n >= maxGoOn {
		fmt.Fprintf(stderr, "kreplay %s: not going on: %d processes have lost the CUDA context (%s=%d)\n", name, n, envGoOn, n)
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "kreplay %s: not going on: %v\n", name, err)
		return 0, false
	}
	again := goOnArgs(name, args, lost.skip)
	fmt.Fprintf(stderr, "kreplay %s: going on in a new process: kreplay %s\n", name, strings.Join(again, " "))
	cmd := exec.Command(exe, again...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", envGoOn, n+1))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		fmt.Fprintf(stderr, "kreplay %s: not going on: %v\n", name, err)
		return 0, false
	}
	return cmd.ProcessState.ExitCode(), true
}

// goOnArgs is the command line that goes on: the command's own, less any
// -resume and -skip it had (skip holds the earlier -skip's IDs too), then
// -resume and -skip.
func goOnArgs(name string, args []string, skip string) []string {
	again := []string{name}
	for i := 0; i < len(args); i++ {
		f := strings.TrimLeft(args[i], "-")
		switch {
		case args[i] == f: // not a flag
		case f == "resume" || strings.HasPrefix(f, "resume="):
			continue
		case f == "skip":
			i++ // and its value
			continue
		case strings.HasPrefix(f, "skip="):
			continue
		}
		again = append(again, args[i])
	}
	return append(again, "-resume", "-skip", skip)
}
