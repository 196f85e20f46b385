package roofline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kreplay/kreplay/internal/atomicfile"
)

// ErrCorrupt is wrapped by ReadCache's error for a cache file that is not
// valid peaks.
var ErrCorrupt = errors.New("not a valid peaks cache")

// ErrStale is wrapped by ReadCache's error for a cache file of another
// identity: another GPU, driver, cuBLAS or measuring method.
var ErrStale = errors.New("measured with another device identity")

// CacheDir is where peaks are cached by default: kreplay's directory under
// the user cache directory (~/.cache/kreplay on Linux).
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("roofline: no user cache directory: %w", err)
	}
	return filepath.Join(base, "kreplay"), nil
}

// CacheFile is the cache file of a device in dir: peaks-<GPU UUID>.json,
// or, without a UUID, peaks-<name>-<driver>.json, with characters other
// than letters, digits, '.', '-' and '_' replaced by '_'.
func CacheFile(dir string, id Identity) string {
	key := id.UUID
	if key == "" {
		drv := id.Driver
		if drv == "" {
			drv = "cuda" + id.CUDADriver
		}
		key = id.GPU + "-" + drv
	}
	return filepath.Join(dir, "peaks-"+sanitize(key)+".json")
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// ReadCache reads the peaks cached in path for the device id. Its errors
// name the file: a missing file wraps fs.ErrNotExist, a file that is not
// valid peaks ErrCorrupt, peaks of another identity ErrStale.
func ReadCache(path string, id Identity) (*Peaks, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("roofline: peaks cache: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Peaks
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("roofline: peaks cache %s: %w: %v", path, ErrCorrupt, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("roofline: peaks cache %s: %w: %v", path, ErrCorrupt, err)
	}
	if p.Identity != id {
		return nil, fmt.Errorf("roofline: peaks cache %s: %w (cached %+v, this device %+v)", path, ErrStale, p.Identity, id)
	}
	return &p, nil
}

// WriteCache writes p to path, whole or not at all, creating its
// directory.
func WriteCache(path string, p *Peaks) error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("roofline: not caching peaks in %s: %v", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("roofline: peaks cache: %w", err)
	}
	data, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return fmt.Errorf("roofline: peaks cache %s: %w", path, err)
	}
	if err := atomicfile.WriteBytes(path, append(data, '\n')); err != nil {
		return fmt.Errorf("roofline: peaks cache: %w", err)
	}
	return nil
}

// Mode says how ForDevice uses the cache.
type Mode int

// The modes.
const (
	// Cached reads the cache and measures only when it has no valid
	// peaks of this device, then writes them (the default).
	Cached Mode = iota
	// Refresh measures and overwrites the cache.
	Refresh
	// Off measures nothing: ForDevice returns no peaks.
	Off
)

// EnvPeaks names the environment variable ModeFromEnv reads: "" or
// "cache" (Cached), "refresh" (Refresh), "off" (Off).
const EnvPeaks = "KREPLAY_PEAKS"

// ModeFromEnv reads the mode from EnvPeaks.
func ModeFromEnv() (Mode, error) {
	switch v := os.Getenv(EnvPeaks); v {
	case "", "cache":
		return Cached, nil
	case "refresh":
		return Refresh, nil
	case "off":
		return Off, nil
	default:
		return Cached, fmt.Errorf("%s=%q: want cache, refresh or off", EnvPeaks, v)
	}
}

// cached decides, from ReadCache's outcome, whether to measure, and says
// why in a note: peaks to use (no measuring) or a reason to measure.
func cached(path string, p *Peaks, err error) (use *Peaks, note string) {
	switch {
	case err == nil:
		return p, fmt.Sprintf("cached in %s", path)
	case errors.Is(err, fs.ErrNotExist):
		return nil, "no cache yet"
	default:
		return nil, err.Error()
	}
}
