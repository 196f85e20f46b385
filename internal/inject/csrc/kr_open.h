/* kr_open.h: opening libcuda and libcupti and reading their symbols, as
 * both injection libraries do (the kernel recorder, kr_inject.c, and the
 * schedule recorder, kr_sched.c). A file that includes it defines
 * static int fail(const char *msg), which KR_SYM returns from. */
#ifndef KR_OPEN_H
#define KR_OPEN_H

#include <dlfcn.h>
#include <stdlib.h>

/* kr_open_first opens the library $env names, when it is set, or else
 * the first of names (NULL-terminated) that opens; NULL when none does. */
static void *kr_open_first(const char *env, const char *const *names) {
	const char *e = getenv(env);
	if (e && *e) return dlopen(e, RTLD_NOW | RTLD_GLOBAL);
	for (int i = 0; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
		if (h) return h;
	}
	return NULL;
}

/* kr_open_cuda opens libcuda ($KREPLAY_INJECT_CUDA or its usual names)
 * into *cu and libcupti ($KREPLAY_INJECT_CUPTI or its usual names and
 * paths) into *cupti. It returns NULL, or the message of the failure. */
static const char *kr_open_cuda(void **cu, void **cupti) {
	static const char *const cudas[] = {"libcuda.so.1", "libcuda.so", NULL};
	static const char *const cuptis[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
	                                     "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	                                     "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so", NULL};
	*cu = kr_open_first("KREPLAY_INJECT_CUDA", cudas);
	*cupti = kr_open_first("KREPLAY_INJECT_CUPTI", cuptis);
	if (!*cu) return "cannot open libcuda";
	if (!*cupti) return "cannot open libcupti (set KREPLAY_INJECT_CUPTI)";
	return NULL;
}

/* KR_SYM sets the function pointer var to lib's symbol name, or returns
 * fail("missing symbol " name) from the function it stands in. */
#define KR_SYM(lib, var, name)                                 \
	do {                                                   \
		*(void **)(&var) = dlsym(lib, name);           \
		if (!var) return fail("missing symbol " name); \
	} while (0)

#endif
