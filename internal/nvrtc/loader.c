// Run-time loading of NVRTC (libnvrtc.so.N). Nothing links against NVRTC;
// init.go opens the library and stores its entry points in kr_nv_fn.

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "kr_nvrtc.h"

void *kr_nv_fn[KR_NV_COUNT];

// kr_nv_dlopen opens name and returns its handle. On failure it returns
// NULL and sets *err to a malloc'd copy of dlerror()'s message, which the
// caller frees.
void *kr_nv_dlopen(const char *name, char **err) {
	void *h;
	const char *msg;

	*err = NULL;
	dlerror();
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		msg = dlerror();
		*err = strdup(msg != NULL ? msg : "dlopen failed");
	}
	return h;
}

void *kr_nv_dlsym(void *handle, const char *name) {
	if (handle == NULL) {
		return NULL;
	}
	return dlsym(handle, name);
}

void kr_nv_set(int slot, void *fn) {
	if (slot >= 0 && slot < KR_NV_COUNT) {
		kr_nv_fn[slot] = fn;
	}
}

void *kr_nv_get(int slot) {
	if (slot >= 0 && slot < KR_NV_COUNT) {
		return kr_nv_fn[slot];
	}
	return NULL;
}
