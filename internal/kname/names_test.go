package kname

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestBaseName(t *testing.T) {
	cases := []struct{ in, want string }{
		// From the brief and real traces.
		{"_ZN8internal5gemvx6kernelIiiEEvT_", "internal::gemvx::kernel"},
		{"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __half, __half, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half>, float>)", "internal::gemvx::kernel"},
		{"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, ...>(...)", "internal::gemvx::kernel"},
		{"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)", "at::native::vectorized_gather_kernel"},
		{"nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_TNT", "nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_TNT"},
		{"  nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT ", "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"},
		{"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)", "cutlass::Kernel2"},
		{"_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE", "cutlass::Kernel2"},
		{"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, float, float, float, false, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*, float const*, float const*, float const*, float const*, float const*)", "cublasLt::splitKreduce_kernel"},
		{"void gemvNSP_kernel<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 1, 16, 4, 1024, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>)", "gemvNSP_kernel"},
		{"ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_f16_RING_LL"},
		{"_Z39ncclDevKernel_AllReduce_Sum_f16_RING_LL24ncclDevKernelArgsStorageILm4096EE", "ncclDevKernel_AllReduce_Sum_f16_RING_LL"},
		{"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(long, at::PhiloxCudaState)", "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel"},
		{"_ZN2at6native54_GLOBAL__N__3c9e1b7d_22_DistributionNormal_cu_0c5b6e8313normal_kernelEv", "at::native::(anonymous namespace)::normal_kernel"},
		{"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})", "at::native::elementwise_kernel"},
		{"Outer<int>::Inner<S>::go(S)", "Outer::Inner::go"},
		{"void foo<int>(int) [clone .cold]", "foo"},
		{"Foo::operator()(int) const", "Foo::operator()"},
		{"bool operator< <int>(Foo<int> const&, Foo<int> const&)", "operator<"},
		{"_ZN3FooclEi", "Foo::operator()"},
		{"_ZN3FooC2Ev", "Foo::Foo"},
		{"_ZN3FooD1Ev", "Foo::~Foo"},
		{"_Z3fooB5cxx11v", "foo[abi:cxx11]"},
		{"foo[abi:cxx11]()", "foo[abi:cxx11]"},
		{"", ""},
		{"_Z", "_Z"},                             // not parseable: returned as is
		{"void broken<int(", "void broken<int("}, // unbalanced: returned as is
	}
	for _, c := range cases {
		if got := BaseName(c.in); got != c.want {
			t.Errorf("BaseName(%q)\n  = %q\n want %q", c.in, got, c.want)
		}
	}
}

func TestSameKernel(t *testing.T) {
	const (
		cut128  = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)"
		cut128m = "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE"
		cut64m  = "_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_nn_align1EEvNT_6ParamsE"
		cut64   = "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(cutlass_80_simt_sgemm_64x64_8x5_nn_align1::Params)"
		gath16  = "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)"
		gath16m = "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb"
		gath8m  = "_ZN2at6native24vectorized_gather_kernelILi8ElEEvPcS2_PT0_illllb"
		nvjet   = "nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_TNT"
		nccl    = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
		ncclm   = "_Z39ncclDevKernel_AllReduce_Sum_f16_RING_LL24ncclDevKernelArgsStorageILm4096EE"
		gemvm   = "_ZN8internal5gemvx6kernelIiiEEvT_"
		gemv    = "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int>(int)"
		gemvB   = "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, Foo>(int)"
	)
	cases := []struct {
		a, b string
		want bool
	}{
		{cut128, cut128m, true},
		{cut128m, cut128, true},
		{cut128, cut64m, false},
		{cut64, cut64m, true},
		{cut128m, cut64m, false},
		{gath16, gath16m, true},
		{gath16, gath8m, false},
		{nvjet, nvjet, true},
		{nvjet, "nvjet_sm90_hsh_128x128_64x5_1x2_h_bz_coopB_bias_TNT", false},
		{nccl, ncclm, true},
		{nccl, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", false},
		{gemvm, gemv, true},
		{gemvm, gemvB, false},
		{gemvm, "internal::gemvx::kernel", true}, // no template arguments on one side: base names decide
		{"cutlass::Kernel2", cut64m, true},
		{cut128, "cutlass::Kernel", false},
	}
	for _, c := range cases {
		if got := SameKernel(c.a, c.b); got != c.want {
			t.Errorf("SameKernel(%q,\n  %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func readPairs(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open("testdata/gcc_names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) == 2 {
			out = append(out, [2]string{parts[0], parts[1]})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d name pairs in testdata", len(out))
	}
	return out
}

// TestGCCCorpus checks mangled/demangled pairs produced by g++ and
// c++filt from templates shaped like PyTorch, cuBLAS, CUTLASS and NCCL
// kernels: both forms must parse fully, agree on the base name and
// template tokens, and differ from every other entry with another base
// name or other template arguments.
func TestGCCCorpus(t *testing.T) {
	pairs := readPairs(t)
	for _, p := range pairs {
		m, d := analyze(p[0]), analyze(p[1])
		if !m.ok || !d.ok {
			t.Errorf("parse failed: mangled ok=%v demangled ok=%v for %s", m.ok, d.ok, p[0])
			continue
		}
		if m.base != d.base || !slices.Equal(m.targToks, d.targToks) {
			t.Errorf("%s\n  mangled:   %q %q\n  demangled: %q %q", p[0], m.base, m.targToks, d.base, d.targToks)
		}
		if !SameKernel(p[1], p[0]) {
			t.Errorf("SameKernel false for %s", p[0])
		}
	}
	for i, p := range pairs {
		for j, q := range pairs {
			if i == j {
				continue
			}
			if p[0] != q[0] && SameKernel(p[1], q[0]) {
				pa, qa := analyze(p[0]), analyze(q[0])
				if pa.base != qa.base || !slices.Equal(pa.targToks, qa.targToks) {
					t.Errorf("SameKernel(%q, %q) = true", p[1], q[0])
				}
			}
		}
	}
}

// TestAgainstCxxfilt demangles the corpus with the system's c++filt and
// checks that this package reads both forms the same way. It skips where
// c++filt is not installed.
func TestAgainstCxxfilt(t *testing.T) {
	path, err := exec.LookPath("c++filt")
	if err != nil {
		t.Skip("c++filt not installed")
	}
	pairs := readPairs(t)
	extra := []string{
		"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_",
		"_ZN5cudnn19winograd_nonfused24winogradForwardFilter4x4IffEEvNS0_20WinogradFilterParamsIT_T0_EE",
		"_Z17kernelWithLiteralILj3ELm5ELb1EEvv",
	}
	var names []string
	for _, p := range pairs {
		names = append(names, p[0])
	}
	names = append(names, extra...)
	out, err := exec.Command(path, names...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("c++filt printed %d lines for %d names", len(lines), len(names))
	}
	for i, m := range names {
		a, b := analyze(m), analyze(lines[i])
		if lines[i] == m {
			continue // c++filt could not demangle it either
		}
		if a.base != b.base || (a.ok && b.ok && !slices.Equal(a.targToks, b.targToks)) {
			t.Errorf("%s\n  mangled:  %q %q\n  c++filt: %s\n  parsed:   %q %q", m, a.base, a.targToks, lines[i], b.base, b.targToks)
		}
	}
}

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"16, long", []string{"16"}},
		{"(char)97, (unsigned char)200, (short)-3, -5000000000ll, 7ull", []string{"97", "200", "3", "5000000000", "7"}},
		{"float (*) [16], std::array<float, 4ul>", []string{"16", "std", "array", "4"}},
		{"foo(int)::{lambda(Bar const&)#2}, {unnamed type#1}", []string{"foo", "Bar"}},
		{"(anonymous namespace)::X, Y[abi:cxx11]", []string{"X", "Y", "cxx11"}},
		{"{lambda(auto:1)#1}, true, false", []string{"true", "false"}},
		{"(float)[3f800000]", []string{"3f800000"}},
		{"{", nil},
		{"}{", nil},
	}
	for _, c := range cases {
		if got := tokenize(c.in); !slices.Equal(got, c.want) {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNormalizeNumber(t *testing.T) {
	for in, want := range map[string]string{"4096ul": "4096", "007": "7", "0": "0", "1u": "1", "3f800000": "3f800000", "ul": "ul"} {
		if got := normalizeNumber(in); got != want {
			t.Errorf("normalizeNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzKernelName(f *testing.F) {
	seeds := []string{
		"_ZN8internal5gemvx6kernelIiiEEvT_",
		"void at::native::vectorized_gather_kernel<16, long>(char*, ...)",
		"nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_TNT",
		"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
		"_ZN1AIJS_S_S_S_S_S_S_S_EEE", "_Z1fIXadL_Z1gvEEEvv", "operator<<<>", "{lambda(", "_ZSt", "_ZN",
		"a<b<c<(d>e)>>>(f)", "_Z1fIA_iEvv", "_Z1fIDv4_fEvv",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := BaseName(s)
		if !SameKernel(s, s) {
			t.Errorf("SameKernel(%q, itself) = false", s)
		}
		_ = SameKernel(s, b)
		_ = tokenize(s)
	})
}
