// Driver of the reduction-family kernels on the host (reduce_host_test.go).
// Compiled after rd_host.h and a kernel source with its definitions and
// one of EMU_REDUCE, EMU_SOFTMAX, EMU_NORM, EMU_SCAN, EMU_RMS, in a
// namespace of its own (hostbuild_test.go), whose host_main is the
// program's main for the variant its first argument picks.
// Protocol on stdin: nbuf; per buffer: u64 size + bytes. nlaunch; per launch:
// name (u64 len + bytes), grid[3], block[3] (u32), nargs, per arg: u32 kind
// (0 buffer: i32 index, -1 null; 1 raw: u64 len + bytes). Writes all buffers
// to stdout (u64 size + bytes each).
static std::vector<std::vector<char>> bufs;
struct Arg { int kind; int buf; std::vector<char> raw; };
template <class T> T rd(FILE *f) { T v; if (fread(&v, sizeof v, 1, f) != 1) { fprintf(stderr, "short read\n"); exit(2); } return v; }
static void *bp(const Arg &a) { return a.buf < 0 ? nullptr : bufs[a.buf].data(); }
template <class P> static P rawp(const Arg &a) { P p; if (a.raw.size() != sizeof(P)) { fprintf(stderr, "raw %zu != %zu\n", a.raw.size(), sizeof(P)); exit(2); } memcpy(&p, a.raw.data(), sizeof p); return p; }

static void dispatch(const std::string &name, dim3e g, dim3e b, std::vector<Arg> &a) {
#if defined(EMU_REDUCE)
#if !RD_COLS
	if (name == "rd_rows") { RdPlan p = rawp<RdPlan>(a[1]); emu_launch(g, b, [&] { rd_rows((const in_t *)bp(a[0]), p, (out_t *)bp(a[2]), (long long *)bp(a[3]), (St *)bp(a[4])); }); return; }
#else
	if (name == "rd_cols") { RdPlan p = rawp<RdPlan>(a[1]); emu_launch(g, b, [&] { rd_cols((const in_t *)bp(a[0]), p, (out_t *)bp(a[2]), (long long *)bp(a[3]), (St *)bp(a[4])); }); return; }
#endif
	if (name == "rd_finish") { RdPlan p = rawp<RdPlan>(a[1]); emu_launch(g, b, [&] { rd_finish((const St *)bp(a[0]), p, (out_t *)bp(a[2]), (long long *)bp(a[3])); }); return; }
#elif defined(EMU_SOFTMAX)
	RowPlan p = rawp<RowPlan>(a[1]);
	if (name == "sm_rows") { emu_launch(g, b, [&] { sm_rows((const in_t *)bp(a[0]), p, (out_t *)bp(a[2])); }); return; }
	if (name == "sm_long") { emu_launch(g, b, [&] { sm_long((const in_t *)bp(a[0]), p, (out_t *)bp(a[2])); }); return; }
	if (name == "sm_cols") { emu_launch(g, b, [&] { sm_cols((const in_t *)bp(a[0]), p, (out_t *)bp(a[2])); }); return; }
#elif defined(EMU_NORM)
	RowPlan p = rawp<RowPlan>(a[1]);
	auto run = [&](auto k) { emu_launch(g, b, [&] { k((const in_t *)bp(a[0]), p, (const w_t *)bp(a[2]), (const w_t *)bp(a[3]), (in_t *)bp(a[4]), (acc_t *)bp(a[5]), (acc_t *)bp(a[6])); }); };
	if (name == "ln_rows") { run(ln_rows); return; }
	if (name == "ln_long") { run(ln_long); return; }
#elif defined(EMU_SCAN)
	RowPlan p = rawp<RowPlan>(a[1]);
	if (name == "sc_rows") { emu_launch(g, b, [&] { sc_rows((const in_t *)bp(a[0]), p, (out_t *)bp(a[2])); }); return; }
	if (name == "sc_cols") { emu_launch(g, b, [&] { sc_cols((const in_t *)bp(a[0]), p, (out_t *)bp(a[2])); }); return; }
#elif defined(EMU_RMS)
#if RMS_T != RD_F64
	if (name == "kr_rms_vec") { int n = rawp<int>(a[0]); float eps = rawp<float>(a[1]); emu_launch(g, b, [&] { kr_rms_vec(n, eps, (const rms_t *)bp(a[2]), (const rms_t *)bp(a[3]), (float *)bp(a[4]), (rms_t *)bp(a[5])); }); return; }
#endif
	if (name == "kr_rms_moments") { long long n = rawp<long long>(a[0]); rms_acc eps = rawp<rms_acc>(a[1]); emu_launch(g, b, [&] { kr_rms_moments(n, eps, (const rms_t *)bp(a[2]), (rms_acc *)bp(a[3])); }); return; }
	if (name == "kr_rms_fwd") { long long n = rawp<long long>(a[0]); emu_launch(g, b, [&] { kr_rms_fwd(n, (const rms_t *)bp(a[1]), (const rms_acc *)bp(a[2]), (const rms_t *)bp(a[3]), (rms_t *)bp(a[4])); }); return; }
#endif
	fprintf(stderr, "no kernel %s\n", name.c_str());
	exit(2);
}

int host_main(int, char **) {
	FILE *in = stdin;
	unsigned long long nb = rd<unsigned long long>(in);
	for (unsigned long long i = 0; i < nb; i++) {
		unsigned long long n = rd<unsigned long long>(in);
		std::vector<char> v(n + 64);
		if (n && fread(v.data(), 1, n, in) != n) return 2;
		v.resize(n);
		v.reserve(n + 64);
		bufs.push_back(std::move(v));
	}
	unsigned long long nl = rd<unsigned long long>(in);
	for (unsigned long long l = 0; l < nl; l++) {
		unsigned long long len = rd<unsigned long long>(in);
		std::string name(len, 0);
		if (fread(name.data(), 1, len, in) != len) return 2;
		dim3e g, b;
		g.x = rd<unsigned>(in); g.y = rd<unsigned>(in); g.z = rd<unsigned>(in);
		b.x = rd<unsigned>(in); b.y = rd<unsigned>(in); b.z = rd<unsigned>(in);
		unsigned na = rd<unsigned>(in);
		std::vector<Arg> args(na);
		for (auto &a : args) {
			a.kind = rd<unsigned>(in);
			if (a.kind == 0) a.buf = rd<int>(in);
			else { unsigned long long n = rd<unsigned long long>(in); a.raw.resize(n); if (fread(a.raw.data(), 1, n, in) != n) return 2; }
		}
		dispatch(name, g, b, args);
	}
	for (auto &v : bufs) {
		unsigned long long n = v.size();
		fwrite(&n, sizeof n, 1, stdout);
		fwrite(v.data(), 1, n, stdout);
	}
	return 0;
}
