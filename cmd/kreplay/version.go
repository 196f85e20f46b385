package main

import (
	"io"

	"github.com/kreplay/kreplay/internal/buildinfo"
)

// cmdVersion prints which kreplay this is (internal/buildinfo).
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	return buildinfo.Read().Write(stdout)
}
