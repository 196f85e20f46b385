package kname

import "testing"

func TestCollective(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE", true},
		{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", true},
		{"ncclKernel_AllReduce_RING_LL_Sum_half(ncclDevComm*, unsigned long, ncclWork*)", true},
		{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_T1_", false},
		{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", false},
	} {
		if got := Collective(tc.name); got != tc.want {
			t.Errorf("Collective(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
