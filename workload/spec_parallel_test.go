package workload

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Specs with "parallel": what they resolve to, or the error, which names
// the file and the field.
func TestParseSpecParallel(t *testing.T) {
	dir := specDir(t)
	const w = `"workload": {"kind": "prefill", "batch": 1, "seq": 8}`
	const m = `"model": {"builtin": "llama-7b"}`
	const heads = `"model": {"config": {"model_type": "llama", "num_attention_heads": 12, "num_key_value_heads": 4}}`
	const cmd = `"command": {"argv": ["python3", "infer.py"]}`
	for _, tc := range []struct {
		name, spec string
		world      int   // want: the ranks
		devices    []int // want: the devices
		want       string
	}{
		{"tensor 2", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": {"tensor": 2}}`, 2, []int{0, 1}, ""},
		{"tensor 8", `{"version": 1, ` + m + `, ` + w + `, "devices": [7, 6, 5, 4, 3, 2, 1, 0], "parallel": {"tensor": 8}}`, 8, []int{7, 6, 5, 4, 3, 2, 1, 0}, ""},
		{"tensor 1", `{"version": 1, ` + m + `, ` + w + `, "devices": [3], "parallel": {"tensor": 1}}`, 1, []int{3}, ""},
		{"null", `{"version": 1, ` + m + `, ` + w + `, "parallel": null}`, 1, []int{0}, ""},
		{"command", `{"version": 1, ` + cmd + `, ` + w + `, "devices": [2, 3], "parallel": {"tensor": 2}}`, 2, []int{2, 3}, ""},
		{"heads split", `{"version": 1, ` + heads + `, ` + w + `, "devices": [0, 1, 2, 3], "parallel": {"tensor": 4}}`, 4, []int{0, 1, 2, 3}, ""},
		{"size not devices", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": {"tensor": 4}}`, 0, nil, "parallel.tensor: 4 ranks, but 2 devices [0 1]"},
		{"default device", `{"version": 1, ` + m + `, ` + w + `, "parallel": {"tensor": 2}}`, 0, nil, "parallel.tensor: 2 ranks, but 1 devices [0]"},
		{"zero", `{"version": 1, ` + m + `, ` + w + `, "parallel": {"tensor": 0}}`, 0, nil, "parallel.tensor: 0 is not a tensor-parallel size (1 to 8)"},
		{"nine", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1, 2, 3, 4, 5, 6, 7, 8], "parallel": {"tensor": 9}}`, 0, nil, "parallel.tensor: 9 is not a tensor-parallel size"},
		{"fraction", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": {"tensor": 1.5}}`, 0, nil, "parallel.tensor: want an integer, got 1.5"},
		{"missing size", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": {}}`, 0, nil, "parallel.tensor: missing"},
		{"unknown field", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": {"tensor": 2, "pipeline": 2}}`, 0, nil, `parallel: unknown field "pipeline"`},
		{"not an object", `{"version": 1, ` + m + `, ` + w + `, "devices": [0, 1], "parallel": 2}`, 0, nil, "parallel: want an object, got 2"},
		{"devices twice", `{"version": 1, ` + m + `, ` + w + `, "devices": [1, 1], "parallel": {"tensor": 2}}`, 0, nil, "devices[1]: device 1 is listed twice"},
		{"heads do not split", `{"version": 1, ` + heads + `, ` + w + `, "devices": [0, 1, 2, 3, 4, 5, 6, 7], "parallel": {"tensor": 8}}`, 0, nil, "parallel.tensor: 8 ranks, but the model's num_attention_heads is 12"},
		{"kv heads do not split", `{"version": 1, ` + heads + `, ` + w + `, "devices": [0, 1, 2, 3, 4, 5], "parallel": {"tensor": 6}}`, 0, nil, "6 ranks, but the model's num_key_value_heads is 4"},
		{"kv heads", `{"version": 1, "model": {"config": {"model_type": "llama", "num_attention_heads": 12, "num_key_value_heads": 2}}, ` + w + `, "devices": [0, 1, 2], "parallel": {"tensor": 3}}`, 0, nil, "the model's num_key_value_heads is 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(t, dir, tc.spec)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "spec.json")+": ") {
					t.Fatalf("error %v, want %q after the file name", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.World() != tc.world || !reflect.DeepEqual(s.Devices, tc.devices) {
				t.Errorf("world %d on %v, want %d on %v", s.World(), s.Devices, tc.world, tc.devices)
			}
			if err := s.Capturable(); err != nil {
				t.Errorf("Capturable: %v", err)
			}
			if r := s.Runnable(); (r == nil) != (tc.world == 1) {
				t.Errorf("Runnable: %v, want an error for %d ranks only", r, tc.world)
			}
			js, err := s.JSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseSpec(js, filepath.Join(t.TempDir(), "spec.json"))
			if err != nil || !reflect.DeepEqual(back, s) {
				t.Errorf("read back: %v\n%+v, was\n%+v", err, back, s)
			}
		})
	}
}

// A model on several devices without "parallel" is refused, with the
// field that would split it.
func TestCapturableWithoutParallel(t *testing.T) {
	s, err := parse(t, specDir(t), `{"version": 1, "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "seq": 8}, "devices": [0, 1]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.Capturable(), s.Runnable()} {
		if err == nil || !strings.Contains(err.Error(), `devices [0 1]: kreplay's runner runs a model on one GPU unless the spec says "parallel": {"tensor": 2}`) {
			t.Errorf("got %v", err)
		}
	}
	if !strings.Contains(s.Summary(), "; device 0") {
		t.Errorf("summary %q", s.Summary())
	}
	s.Parallel = &Parallel{Tensor: 2}
	if got := s.Summary(); !strings.HasSuffix(got, "; tensor-parallel 2 on devices [0 1]") {
		t.Errorf("summary %q", got)
	}
}
