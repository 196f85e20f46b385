/* A stand-in for kreplay's kernel recorder (internal/inject), for the CPU
 * tests: it logs its calls to the file $FAKE_INJECT_LOG. It refuses to arm
 * (-1, as the real one not initialized by CUDA) in a process where the
 * schedule recorder was preloaded (kr_sched_hooked is defined): that
 * recorder's wrappers must stay out of the kernel recorder's process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void logline(const char *s) {
	FILE *f = fopen(getenv("FAKE_INJECT_LOG"), "a");
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

int kr_inject_arm(int on) {
	if (on && dlsym(RTLD_DEFAULT, "kr_sched_hooked")) {
		logline("arm refused: the schedule recorder is preloaded\n");
		return -1;
	}
	logline(on ? "arm 1\n" : "arm 0\n");
	return 0;
}

int kr_inject_flush(void) {
	logline("flush\n");
	return 0;
}

int kr_inject_detach(void) {
	logline("detach\n");
	return 0;
}
