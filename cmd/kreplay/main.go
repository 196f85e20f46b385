// Command kreplay predicts the time and energy of LLM inference on NVIDIA
// GPUs from isolated kernel replays.
//
// Usage:
//
//	kreplay capture SPEC -o DIR
//	kreplay import TRACE [-o FILE] [-workload NAME]
//	kreplay inspect [-top N] [-json] TRACE|SET.json|BUNDLE ...
//
// Run "kreplay help" for the list of commands.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
