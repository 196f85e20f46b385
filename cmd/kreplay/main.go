// Command kreplay predicts the time and energy of LLM inference on NVIDIA
// GPUs from isolated kernel replays.
//
// Usage:
//
//	kreplay capture SPEC -o DIR
//	kreplay import [-o FILE] TRACE|SET|BUNDLE
//	kreplay inspect [-top N] [-json] [TRACE|SET|BUNDLE ...]
//	kreplay predict [TRACE|SET|BUNDLE]
//	kreplay report BENCH ...
//	kreplay version
//
// Run "kreplay help" for the list of commands, the arguments' names and
// the exit statuses, and "kreplay help COMMAND" for a command's flags.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
