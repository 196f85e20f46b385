// Host launcher for the CPU tests of the elementwise-family kernels, built
// after ew_host.h, ew_common.cu and one kernel source, in a namespace of
// its own (hostbuild_test.go), whose host_main is the program's main for
// the variant its first argument picks. EW_HOST_KERNEL picks
// the kernel: 1 kr_ew, 2 kr_ew_batched, 3 kr_gather, 4 kr_arange,
// 5 kr_ew_pt_generic, 6 kr_ew_pt_lin, 7 kr_cat_pt (PARAMS: EwCatArgs),
// 8 kr_ew_pt_dyncopy, 9 kr_cat_ptmeta (PARAMS: EwCatPtArgs). The block is 256 threads, or $EW_HOST_BLOCK.
//
//   prog VARIANT ARENA PARAMS GX GY [N START STEP ISTART ISTEP]
//
// ARENA is the device memory, read and written back: a pointer p in the
// parameters stands for ARENA + (p - EW_HOST_BASE). PARAMS holds the
// kernel's parameter struct(s) (kr_arange takes its scalars as arguments).
#define EW_HOST_BASE (1ULL << 40)

template <typename P> static P *ew_reloc(P *p) {
	if (!p) return p;
	return (P *)(ew_arena + ((unsigned long long)p - EW_HOST_BASE));
}

static void *ew_read(const char *path, size_t *n) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	void *p = aligned_alloc(256, (*n + 256) / 256 * 256);
	if (*n && fread(p, 1, *n, f) != *n) {
		perror(path);
		exit(2);
	}
	fclose(f);
	return p;
}

int host_main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: %s ARENA PARAMS GX GY [...]\n", argv[0]);
		return 2;
	}
	size_t an, pn;
	ew_arena = (unsigned char *)ew_read(argv[1], &an);
	ew_arena_size = an;
	void *params = ew_read(argv[2], &pn);
	blockDim = {256, 1, 1};
	if (const char *b = getenv("EW_HOST_BLOCK")) blockDim.x = (unsigned)atoi(b);
	gridDim = {(unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), 1};
#if EW_HOST_KERNEL == 1 || EW_HOST_KERNEL == 2 || EW_HOST_KERNEL == 5 || EW_HOST_KERNEL == 6 || EW_HOST_KERNEL == 8
	EwParams *ps = (EwParams *)params;
	for (size_t i = 0; i < pn / sizeof(EwParams); i++)
		for (int k = 0; k < 4; k++) ps[i].ptr[k] = ew_reloc(ps[i].ptr[k]);
#elif EW_HOST_KERNEL == 3
	EwGather *g = (EwGather *)params;
	g->out = ew_reloc(g->out);
	g->src = ew_reloc(g->src);
	g->idx = ew_reloc(g->idx);
#elif EW_HOST_KERNEL == 7
	EwCatArgs *ca = (EwCatArgs *)params;
	if (pn != sizeof(EwCatArgs)) {
		fprintf(stderr, "EwCatArgs: %zu bytes of parameters, want %zu\n", pn, sizeof(EwCatArgs));
		return 2;
	}
	ca->out = ew_reloc(ca->out);
	for (int i = 0; i < EW_CAT_BATCH; i++) ca->in[i].in = ew_reloc(ca->in[i].in);
#elif EW_HOST_KERNEL == 9
	EwCatPtArgs *ca = (EwCatPtArgs *)params;
	if (pn != sizeof(EwCatPtArgs)) {
		fprintf(stderr, "EwCatPtArgs: %zu bytes of parameters, want %zu\n", pn, sizeof(EwCatPtArgs));
		return 2;
	}
	ca->out = ew_reloc(ca->out);
	for (int i = 0; i < EW_CAT_PT_N; i++) ca->meta.in[i] = ew_reloc(ca->meta.in[i]);
#endif
	for (unsigned by = 0; by < gridDim.y; by++)
		for (unsigned bx = 0; bx < gridDim.x; bx++)
			for (unsigned tx = 0; tx < blockDim.x; tx++) {
				blockIdx = {bx, by, 0};
				threadIdx = {tx, 0, 0};
#if EW_HOST_KERNEL == 1
				kr_ew(*ps);
#elif EW_HOST_KERNEL == 2
				kr_ew_batched(ps);
#elif EW_HOST_KERNEL == 3
				kr_gather(*g);
#elif EW_HOST_KERNEL == 4
				kr_arange(ew_reloc((char *)strtoull(argv[5], 0, 10)), atoll(argv[6]), atof(argv[7]), atof(argv[8]),
				          atoll(argv[9]), atoll(argv[10]));
#elif EW_HOST_KERNEL == 5
				kr_ew_pt_generic(*ps);
#elif EW_HOST_KERNEL == 6
				kr_ew_pt_lin(*ps);
#elif EW_HOST_KERNEL == 7
				kr_cat_pt(*ca);
#elif EW_HOST_KERNEL == 8
				kr_ew_pt_dyncopy(*ps);
#elif EW_HOST_KERNEL == 9
				kr_cat_ptmeta(*ca);
#endif
			}
	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(ew_arena, 1, an, f) != an) {
		perror(argv[1]);
		return 2;
	}
	fclose(f);
	return 0;
}
