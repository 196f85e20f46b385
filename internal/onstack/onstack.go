// Package onstack keeps the Go runtime's rule for signal handlers that C
// libraries install in the process: run them on the alternate signal
// stack (SA_ONSTACK).
//
// The Go runtime runs its goroutines on small stacks and gives every
// thread an alternate signal stack; a handler installed without
// SA_ONSTACK that chains to Go's (as the CUDA driver's do, installed at
// cuInit or when it starts a context or a communicator's threads) runs on
// the interrupted stack, and Go then ends the process with "non-Go code
// set up signal handler without SA_ONSTACK flag" instead of handling the
// signal: a kreplay run stopped by SIGTERM or SIGINT died with a
// goroutine dump and exit status 2. Fix adds the flag to such handlers,
// keeping each handler, its mask and its other flags; the Go runtime's
// own handlers already carry it.
package onstack

/*
#include <signal.h>
#include <string.h>

// kr_installed reports whether sa is a handler (neither SIG_DFL nor
// SIG_IGN).
static int kr_installed(const struct sigaction *sa) {
	return (sa->sa_flags & SA_SIGINFO) || (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

// kr_onstack adds SA_ONSTACK to the handler of sig when one is installed
// without it: 1 when it did, 0 when there was nothing to do, -1 when
// sigaction failed.
static int kr_onstack(int sig) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	if (sigaction(sig, NULL, &sa) != 0) return -1;
	if (!kr_installed(&sa) || (sa.sa_flags & SA_ONSTACK)) return 0;
	sa.sa_flags |= SA_ONSTACK;
	return sigaction(sig, &sa, NULL) == 0 ? 1 : -1;
}

// kr_onstack_missing reports whether sig has a handler without
// SA_ONSTACK.
static int kr_onstack_missing(int sig) {
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0) return 0;
	return kr_installed(&sa) && !(sa.sa_flags & SA_ONSTACK);
}

// kr_onstack_flags returns sig's handler's flags, or -1.
static int kr_onstack_flags(int sig) {
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0) return -1;
	return sa.sa_flags;
}

static void kr_onstack_bare(int sig) { (void)sig; }

// kr_onstack_install_bare installs a handler without SA_ONSTACK on sig,
// as a C library may (tests).
static int kr_onstack_install_bare(int sig) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = kr_onstack_bare;
	return sigaction(sig, &sa, NULL);
}

// kr_onstack_is_bare reports whether sig's handler is kr_onstack_bare.
static int kr_onstack_is_bare(int sig) {
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0) return 0;
	return sa.sa_handler == kr_onstack_bare;
}
*/
import "C"

import "errors"

// Signals are the signals Fix looks at: those a user or a script sends to
// stop a run, and the ones the Go runtime forwards or uses itself.
var Signals = []int{
	int(C.SIGHUP), int(C.SIGINT), int(C.SIGQUIT), int(C.SIGTERM), int(C.SIGUSR1), int(C.SIGUSR2),
	int(C.SIGPIPE), int(C.SIGCHLD), int(C.SIGURG), int(C.SIGSEGV), int(C.SIGBUS), int(C.SIGFPE), int(C.SIGILL),
	int(C.SIGABRT), int(C.SIGALRM), int(C.SIGPROF), int(C.SIGWINCH),
}

// Fix adds SA_ONSTACK to every handler of Signals installed without it,
// and returns the signals whose handler it changed. Call it after a C
// library that may install handlers starts (the CUDA driver, NCCL).
func Fix() []int {
	var fixed []int
	for _, s := range Signals {
		if C.kr_onstack(C.int(s)) == 1 {
			fixed = append(fixed, s)
		}
	}
	return fixed
}

// Missing returns the signals of Signals whose installed handler lacks
// SA_ONSTACK (after Fix, none unless sigaction failed or a library
// installed another since).
func Missing() []int {
	var out []int
	for _, s := range Signals {
		if C.kr_onstack_missing(C.int(s)) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// flags returns sig's handler's sigaction flags (tests).
func flags(sig int) int { return int(C.kr_onstack_flags(C.int(sig))) }

// installBare installs a C handler without SA_ONSTACK on sig, as the CUDA
// driver does (tests).
func installBare(sig int) error {
	if C.kr_onstack_install_bare(C.int(sig)) != 0 {
		return errors.New("sigaction failed")
	}
	return nil
}

// isBare reports whether sig's handler is installBare's (tests).
func isBare(sig int) bool { return C.kr_onstack_is_bare(C.int(sig)) != 0 }

// onstackFlag is SA_ONSTACK.
const onstackFlag = int(C.SA_ONSTACK)
