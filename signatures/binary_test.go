package signatures

import (
	"slices"
	"testing"
)

// align pairs equal elements in order and resynchronizes after extra or
// missing elements on either side.
func TestAlign(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		want []int
	}{
		{"equal", "abcd", "abcd", []int{0, 1, 2, 3}},
		{"extra in recorded", "abcd", "abXcd", []int{0, 1, 3, 4}},
		{"missing in recorded", "abXcd", "abcd", []int{0, 1, -1, 2, 3}},
		{"both differ", "abXd", "abYd", []int{0, 1, -1, 3}},
		{"recorded short", "abcd", "ab", []int{0, 1, -1, -1}},
		{"empty", "", "ab", []int{}},
		{"wildcard", "abcd", "a*cd", []int{0, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := align(len(tc.a), len(tc.b), func(i, j int) bool { return tc.b[j] == '*' || tc.a[i] == tc.b[j] })
			if !slices.Equal(got, tc.want) {
				t.Errorf("align(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestSameFunction(t *testing.T) {
	for _, tc := range []struct {
		traced, recorded string
		want             bool
	}{
		{"triton_poi_fused_add_0", "triton_poi_fused_add_0", true},
		{"triton_poi_fused_add_0", "triton_poi_fused_add_1", false},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
			"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", true},
		{"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
			"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", false},
		{"nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT", "nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT", true},
	} {
		if got := SameFunction(tc.traced, tc.recorded); got != tc.want {
			t.Errorf("SameFunction(%.50q, %.50q) = %v", tc.traced, tc.recorded, got)
		}
	}
}
