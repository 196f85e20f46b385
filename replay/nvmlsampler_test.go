package replay

import (
	"strings"
	"testing"
)

// A sampler that cannot start gives no sampler and the reason; no
// sampler stops with no states and no reason; the reasons show in the
// results' lines.
func TestSamplerErrors(t *testing.T) {
	s, why := startSampler() // no meters: energy.StartSampler refuses
	if s != nil || !strings.HasPrefix(why, "NVML sampler did not start: ") {
		t.Errorf("startSampler() = %v, %q", s, why)
	}
	if states, why := stopSampler(nil, nil); states != nil || why != "" {
		t.Errorf("stopSampler(nil) = %v, %q", states, why)
	}
	for _, tt := range []struct{ start, stop, want string }{
		{"a", "b", "a"}, {"", "b", "b"}, {"a", "", "a"}, {"", "", ""},
	} {
		if got := joinSamplerErr(tt.start, tt.stop); got != tt.want {
			t.Errorf("joinSamplerErr(%q, %q) = %q, want %q", tt.start, tt.stop, got, tt.want)
		}
	}
	r := &Result{ID: "x", SamplerErr: why}
	if !strings.Contains(r.String(), "throttling unchecked: NVML sampler did not start") {
		t.Errorf("result line %q", r.String())
	}
	tr := &TimelineResult{Workload: "w", SamplerErr: why}
	if !strings.HasSuffix(tr.String(), "; throttling unchecked: "+why) {
		t.Errorf("timeline line %q", tr.String())
	}
	if strings.Contains((&Result{ID: "x"}).String(), "unchecked") {
		t.Error("a result without a sampler error says throttling unchecked")
	}
}
