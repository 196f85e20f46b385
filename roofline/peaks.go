package roofline

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kreplay/kreplay/replay"
)

// FormatVersion is the version of the cache file's format.
const FormatVersion = 1

// MethodVersion names the way Measure measures; a cache measured another
// way is measured again. Version 2 adds the hardware figures (Peaks.HW).
const MethodVersion = 2

// DTypes are the dtypes whose GEMM peak Measure measures, in the order
// reports list them.
var DTypes = []string{"f16", "bf16", "f32", "f8e4m3"}

// Identity says which device and libraries peaks were measured with; the
// cache holds peaks for one identity.
type Identity struct {
	GPU  string `json:"gpu"`
	UUID string `json:"uuid,omitempty"`
	// Driver is the NVIDIA driver version (NVML; "" without NVML),
	// CUDADriver the CUDA driver API version ("13.0").
	Driver     string `json:"driver,omitempty"`
	CUDADriver string `json:"cuda_driver"`
	// CUBLAS and CUBLASLt are the library versions ("12.9.1").
	CUBLAS   string `json:"cublas"`
	CUBLASLt string `json:"cublaslt,omitempty"`
	// Method is the MethodVersion the peaks were measured with.
	Method int `json:"method"`
}

// Peaks are a device's measured peaks.
type Peaks struct {
	Version    int       `json:"version"`
	Identity   Identity  `json:"identity"`
	MeasuredAt time.Time `json:"measured_at"`
	// CopyGBps is the device-to-device copy bandwidth, bytes read plus
	// written per second over 1e9 (2 x size / time).
	CopyGBps float64 `json:"copy_gbps"`
	// TFLOPs is the dense GEMM rate per dtype, FLOPs per second over
	// 1e12 (2·m·n·k / time).
	TFLOPs map[string]float64 `json:"tflops"`
	// Missing says, per dtype of DTypes without a peak, why.
	Missing map[string]string `json:"missing,omitempty"`
	// Runs are the timed operations behind the peaks (none when the peaks
	// were read from configuration lines).
	Runs []Run `json:"runs,omitempty"`
	// HW is the device's data-sheet side, the hardware roof; nil for
	// peaks read from configuration lines written before kreplay had it.
	HW *Hardware `json:"hw,omitempty"`
}

// Run is one timed operation of Measure.
type Run struct {
	// Peak is "copy" or a dtype.
	Peak string `json:"peak"`
	// Call says what ran: the call, its size and types.
	Call    string `json:"call"`
	Repeats int    `json:"repeats"`
	// BestNS and MedianNS are over the repeats; Rate, the peak, is the
	// rate of the best (GB/s for the copy, TFLOP/s for a GEMM).
	BestNS   float64 `json:"best_ns"`
	MedianNS float64 `json:"median_ns"`
	Rate     float64 `json:"rate"`
}

// Configuration keys of the peaks in benchmark output (benchfmt keys are
// lower case).
const (
	KeyCopy     = "peak-copy-gbps"
	KeyMeasured = "peaks-measured"
	keyPrefix   = "peak-"
	keySuffix   = "-tflops"
	// KeyDRAM and KeySMClock are the hardware roof's DRAM bandwidth
	// (Hardware.DRAMGBps) and maximum SM clock (Hardware.MaxSMClockMHz).
	KeyDRAM    = "peak-dram-gbps"
	KeySMClock = "peak-sm-clock-mhz"
	// KeySMs and KeyCC are replay.Device.Config's lines of the SM count
	// and compute capability, which FromConfig reads into Hardware (Config
	// does not write them again).
	KeySMs = "gpu-sms"
	KeyCC  = "gpu-cc"
)

// KeyTFLOPs is the configuration key of dtype's GEMM peak,
// "peak-<dtype>-tflops".
func KeyTFLOPs(dtype string) string { return keyPrefix + dtype + keySuffix }

// PeakDTypes lists the dtypes with a GEMM peak: those of DTypes first, in
// its order, then any other, sorted.
func (p *Peaks) PeakDTypes() []string {
	var out []string
	for _, d := range DTypes {
		if _, ok := p.TFLOPs[d]; ok {
			out = append(out, d)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(p.TFLOPs)) {
		if !slices.Contains(DTypes, d) {
			out = append(out, d)
		}
	}
	return out
}

// Config returns the peaks as configuration items for benchmark output:
// KeyCopy, KeyTFLOPs of each dtype with a peak, KeyDRAM and KeySMClock
// where the hardware figures have them, and KeyMeasured (RFC 3339, UTC).
// The rates are rounded to 0.1, the clock to 1 MHz. The SM count and
// compute capability are left to replay.Device.Config's KeySMs and KeyCC
// lines, which precede the peaks in kreplay's output.
func (p *Peaks) Config() []replay.ConfigItem {
	c := []replay.ConfigItem{{Key: KeyCopy, Value: strconv.FormatFloat(p.CopyGBps, 'f', 1, 64)}}
	for _, d := range p.PeakDTypes() {
		c = append(c, replay.ConfigItem{Key: KeyTFLOPs(d), Value: strconv.FormatFloat(p.TFLOPs[d], 'f', 1, 64)})
	}
	if h := p.HW; h != nil && h.DRAMGBps > 0 {
		c = append(c, replay.ConfigItem{Key: KeyDRAM, Value: strconv.FormatFloat(h.DRAMGBps, 'f', 1, 64)})
	}
	if h := p.HW; h != nil && h.MaxSMClockMHz > 0 {
		c = append(c, replay.ConfigItem{Key: KeySMClock, Value: strconv.FormatFloat(h.MaxSMClockMHz, 'f', 0, 64)})
	}
	if !p.MeasuredAt.IsZero() {
		c = append(c, replay.ConfigItem{Key: KeyMeasured, Value: p.MeasuredAt.UTC().Format(time.RFC3339)})
	}
	return c
}

// FromConfig reads peaks back from configuration items (as Config writes
// them): nil, nil when there is no peak-* key at all. A peak-* or
// KeyMeasured value that does not parse, or peaks without KeyCopy, is an
// error that names the key. The hardware figures (Peaks.HW) come from
// KeyDRAM, KeySMClock, KeySMs and KeyCC; HW is nil when none of them is
// there (output written before kreplay had the hardware roof), and
// Hardware.Missing lists those that are not. A KeySMs or KeyCC value
// that does not parse counts as missing.
func FromConfig(items []replay.ConfigItem) (*Peaks, error) {
	p := &Peaks{Version: FormatVersion, TFLOPs: map[string]float64{}}
	h, hw := &Hardware{}, false
	found := false
	for _, it := range items {
		k, v := it.Key, strings.TrimSpace(it.Value)
		switch {
		case k == KeySMs || k == KeyCC:
			hw = true
			readDevice(h, k, v)
		case k == KeyDRAM || k == KeySMClock:
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || x > 1e9 {
				return nil, fmt.Errorf("configuration %s: %q: want a positive number", k, v)
			}
			hw = true
			if k == KeyDRAM {
				h.DRAMGBps = x
			} else {
				h.MaxSMClockMHz = x
			}
		case k == KeyMeasured:
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return nil, fmt.Errorf("configuration %s: %q: want an RFC 3339 time", k, v)
			}
			p.MeasuredAt = t
		case k == KeyCopy || strings.HasPrefix(k, keyPrefix) && strings.HasSuffix(k, keySuffix):
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || x > 1e9 {
				return nil, fmt.Errorf("configuration %s: %q: want a positive rate", k, v)
			}
			found = true
			if k == KeyCopy {
				p.CopyGBps = x
				continue
			}
			d := strings.TrimSuffix(strings.TrimPrefix(k, keyPrefix), keySuffix)
			if d == "" {
				return nil, fmt.Errorf("configuration %s: no dtype in the key", k)
			}
			p.TFLOPs[d] = x
		}
	}
	if !found {
		return nil, nil
	}
	if p.CopyGBps == 0 {
		return nil, fmt.Errorf("configuration: GEMM peaks without %s", KeyCopy)
	}
	if hw {
		h.Missing = missingLines(h)
		p.HW = h
	}
	return p, nil
}

// missingLines names the configuration lines the hardware figures h read
// from them lack: "no peak-dram-gbps, peak-sm-clock-mhz lines (...)", or
// "" when none is missing.
func missingLines(h *Hardware) string {
	var no []string
	for _, k := range []struct {
		key     string
		missing bool
	}{{KeyDRAM, !(h.DRAMGBps > 0)}, {KeySMClock, !(h.MaxSMClockMHz > 0)}, {KeySMs, h.SMs <= 0}, {KeyCC, h.CC == ""}} {
		if k.missing {
			no = append(no, k.key)
		}
	}
	switch len(no) {
	case 0:
		return ""
	case 1:
		return "no " + no[0] + " line"
	}
	s := "no " + strings.Join(no, ", ") + " lines"
	if !(h.DRAMGBps > 0) && !(h.MaxSMClockMHz > 0) {
		s += " (written by a kreplay without the hardware roof, or without NVML)"
	}
	return s
}

// readDevice reads a KeySMs or KeyCC value into h; one that does not
// parse is left out.
func readDevice(h *Hardware, k, v string) {
	if k == KeySMs {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			h.SMs = n
		}
		return
	}
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err == nil && fmt.Sprintf("%d.%d", major, minor) == v {
		h.CC = v
	}
}

// Summary describes the peaks on one line: "copy 2700.0 GB/s (read +
// written), f16 700.0, bf16 710.0 TFLOP/s, measured 2026-11-25".
func (p *Peaks) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "copy %.1f GB/s (read + written)", p.CopyGBps)
	var parts []string
	for _, d := range p.PeakDTypes() {
		parts = append(parts, fmt.Sprintf("%s %.1f", d, p.TFLOPs[d]))
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, ", %s TFLOP/s", strings.Join(parts, ", "))
	}
	for _, d := range slices.Sorted(maps.Keys(p.Missing)) {
		fmt.Fprintf(&b, ", no %s peak (%s)", d, p.Missing[d])
	}
	if !p.MeasuredAt.IsZero() {
		fmt.Fprintf(&b, ", measured %s", p.MeasuredAt.UTC().Format(time.RFC3339))
	}
	b.WriteString("; " + p.HW.summary())
	return b.String()
}

// summary describes the hardware figures: "hardware: DRAM
// 3352.3 GB/s (read + written), 132 SMs, cc 9.0, max SM clock 1980 MHz".
func (h *Hardware) summary() string {
	if h == nil {
		return "no hardware figures"
	}
	var parts []string
	if h.DRAMGBps > 0 {
		parts = append(parts, fmt.Sprintf("DRAM %.1f GB/s (read + written)", h.DRAMGBps))
	}
	if h.SMs > 0 {
		parts = append(parts, fmt.Sprintf("%d SMs", h.SMs))
	}
	if h.CC != "" {
		parts = append(parts, "cc "+h.CC)
	}
	if h.MaxSMClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("max SM clock %.0f MHz", h.MaxSMClockMHz))
	}
	s := "hardware: " + strings.Join(parts, ", ")
	if h.Missing != "" {
		s += " (" + h.Missing + ")"
	}
	return s
}

// validate checks peaks read from a cache file.
func (p *Peaks) validate() error {
	if p.Version != FormatVersion {
		return fmt.Errorf("format version %d, want %d", p.Version, FormatVersion)
	}
	if !(p.CopyGBps > 0) {
		return fmt.Errorf("copy_gbps %g: want a positive rate", p.CopyGBps)
	}
	for d, v := range p.TFLOPs {
		if !(v > 0) {
			return fmt.Errorf("tflops[%q] %g: want a positive rate", d, v)
		}
	}
	if p.MeasuredAt.IsZero() {
		return fmt.Errorf("no measured_at")
	}
	if p.HW != nil {
		return p.HW.validate()
	}
	return nil
}
