package replay

import (
	"encoding/json"
	"math"
	"testing"
)

func TestStatsOf(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
	s := statsOf(values, 0.95)
	if s.MedianNS != 3 || s.MinNS != 1 || s.MaxNS != 5 || math.Abs(s.MeanNS-48.0/16) > 1e-12 {
		t.Errorf("statsOf = %+v", s)
	}
	if !(s.LoNS <= s.MedianNS && s.MedianNS <= s.HiNS) || s.RelCI != max(s.MedianNS-s.LoNS, s.HiNS-s.MedianNS)/s.MedianNS {
		t.Errorf("interval %v..%v, rel CI %v", s.LoNS, s.HiNS, s.RelCI)
	}
	if (statsOf(nil, 0.95) != Stats{}) {
		t.Error("statsOf(nil) is not zero")
	}
}

// The three results that hold Stats write them as flat fields, as before
// Stats existed, so that stored results read back.
func TestStatsJSON(t *testing.T) {
	st := Stats{MedianNS: 1, MeanNS: 2, MinNS: 3, MaxNS: 4, LoNS: 5, HiNS: 6, RelCI: 7}
	want := map[string]float64{"median_ns": 1, "mean_ns": 2, "min_ns": 3, "max_ns": 4, "lo_ns": 5, "hi_ns": 6, "rel_ci": 7}
	for name, v := range map[string]any{"Result": Result{Stats: st}, "RankResult": RankResult{Stats: st}, "TimelineResult": TimelineResult{Stats: st}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k, w := range want {
			if got, ok := m[k].(float64); !ok || got != w {
				t.Errorf("%s: %s = %v, want %v", name, k, m[k], w)
			}
		}
		if _, nested := m["Stats"]; nested {
			t.Errorf("%s: Stats nested", name)
		}
	}
	var r Result
	if err := json.Unmarshal([]byte(`{"median_ns": 42, "rel_ci": 0.01}`), &r); err != nil || r.MedianNS != 42 || r.RelCI != 0.01 {
		t.Errorf("read back %+v, %v", r.Stats, err)
	}
}
