/* Minimal CUDA driver API declarations for GPU tests (no CUDA headers). */
#ifndef KREPLAY_CUBLASTEST_DRV_H
#define KREPLAY_CUBLASTEST_DRV_H
#include <stddef.h>
#include <stdint.h>

int kr_t_open(char *err, size_t errlen);
int kr_t_init(void);
int kr_t_ctx_retain(int ordinal, void **ctx);
int kr_t_ctx_release(int ordinal);
int kr_t_ctx_set_current(void *ctx);
int kr_t_ctx_sync(void);
int kr_t_alloc(uint64_t *p, size_t n);
int kr_t_free(uint64_t p);
int kr_t_htod(uint64_t dst, const void *src, size_t n);
int kr_t_dtoh(void *dst, uint64_t src, size_t n);
int kr_t_memset8(uint64_t dst, unsigned char v, size_t n);
const char *kr_t_err_name(int code);
#endif
