/* A stand-in for kreplay's kernel recorder (internal/inject), for the CPU
 * tests: it logs its calls to the file $FAKE_INJECT_LOG. */
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
