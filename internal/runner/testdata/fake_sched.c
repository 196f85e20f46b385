/* A stand-in for kreplay's schedule recorder (internal/inject's
 * kr_sched.c), for the CPU tests: it logs its calls to the file
 * $FAKE_SCHED_LOG (marks of kind 2 counted per inference, as "tokens N"),
 * and its flush writes the file's header and one line per inference. With
 * FAKE_SCHED_ARM set, kr_sched_arm(1) returns that number. As the real
 * one, it is in hook mode (kr_sched_hooked() > 0) when preloaded: when
 * LD_PRELOAD names it; otherwise it arms only where CUDA would have
 * initialized it, with CUDA_INJECTION64_PATH unset (the tests' stand-in)
 * or naming the library KREPLAY_SCHED_LIB names (-1 otherwise). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int armed, tokens, inferences;

/* kr_sched_hooked: as many "entry points" as the real one would wrap,
 * when LD_PRELOAD names this library; 0 otherwise. */
int kr_sched_hooked(void) {
	Dl_info info;
	const char *pre = getenv("LD_PRELOAD");
	if (!pre || !dladdr((void *)kr_sched_hooked, &info) || !info.dli_fname) return 0;
	return strstr(pre, info.dli_fname) ? 12 : 0;
}

static void logf_(const char *fmt, long long a, long long b, long long c, long long d) {
	FILE *f = fopen(getenv("FAKE_SCHED_LOG"), "a");
	if (f) {
		fprintf(f, fmt, a, b, c, d);
		fclose(f);
	}
}

int kr_sched_arm(int on) {
	const char *fail = getenv("FAKE_SCHED_ARM");
	if (on && fail && *fail) return atoi(fail);
	const char *inj = getenv("CUDA_INJECTION64_PATH"), *lib = getenv("KREPLAY_SCHED_LIB");
	if (on && !kr_sched_hooked() && inj && (!lib || strcmp(inj, lib))) return -1;
	armed = on != 0;
	if (on == 1) inferences = 0;
	logf_("arm %lld\n", on, 0, 0, 0);
	return 0;
}

void kr_sched_mark(int kind) {
	if (!armed) {
		logf_("mark %lld disarmed\n", kind, 0, 0, 0);
		return;
	}
	if (kind == 2) {
		tokens++;
		return;
	}
	if (kind == 3) {
		logf_("tokens %lld\n", tokens, 0, 0, 0);
		inferences++;
	}
	tokens = 0;
	logf_("mark %lld\n", kind, 0, 0, 0);
}

long long kr_sched_flush(const char *path, const char *cpu, int process, long long armed_ns, long long measured_ns,
                         long long call_ns) {
	logf_("flush %lld %lld %lld\n", process, armed_ns, measured_ns, 0);
	FILE *f = fopen(path, "w");
	if (!f) return -1;
	fprintf(f, "kreplay-schedule 1\ncpu %s\nclock CLOCK_MONOTONIC\n", cpu);
	fprintf(f, "process %d overhead_ns_per_inference %lld armed_wall_ns %lld measured_wall_ns %lld\n", process,
	        armed_ns - measured_ns, armed_ns, measured_ns);
	for (int i = 0; i < inferences; i++) fprintf(f, "inference %d start 0\nM 0 0 1\nM 0 0 3\nend %d 0\n", i, i);
	return fclose(f) == 0 ? inferences : -1;
}

int kr_sched_stats(long long *out, int n) {
	/* 5 calls of another thread; hooked, 1 lookup for CUDA 11 */
	long long s[7] = {2LL * inferences, 0, 3, 0, 5, kr_sched_hooked() ? 1 : 0, 0};
	for (int i = 0; i < n && i < 7; i++) out[i] = s[i];
	return n < 7 ? n : 7;
}

int kr_sched_pause(void) {
	armed = 0;
	logf_("pause\n", 0, 0, 0, 0);
	return 0;
}

int kr_sched_detach(void) {
	logf_("detach\n", 0, 0, 0, 0);
	return 0;
}
