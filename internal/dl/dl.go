// Package dl holds what kreplay's run-time-loaded library bindings share:
// trying a list of library names, newest first, and reporting every reason
// when none opens. Each binding keeps its own dlopen/dlsym in C, next to
// its symbol table; this package is pure Go.
package dl

import (
	"fmt"
	"strings"
)

// OpenFirst calls open for each candidate in order and returns the first
// name that opens. open returns ok, or the loader's reason. When none
// opens, the error wraps notFound and names every candidate with its
// reason.
func OpenFirst(notFound error, candidates []string, open func(name string) (reason string, ok bool)) (string, error) {
	var reasons []string
	for _, name := range candidates {
		msg, ok := open(name)
		if ok {
			return name, nil
		}
		if !strings.HasPrefix(msg, name) {
			msg = name + ": " + msg
		}
		reasons = append(reasons, msg)
	}
	return "", fmt.Errorf("%w (tried %s): %s", notFound, strings.Join(candidates, ", "), strings.Join(reasons, "; "))
}
