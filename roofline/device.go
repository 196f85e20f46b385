package roofline

import (
	"fmt"
	"time"

	"github.com/kreplay/kreplay/replay"
)

// Options tune ForDevice. The zero value reads and writes the default
// cache.
type Options struct {
	Mode Mode
	// Dir is the cache directory (default CacheDir()).
	Dir     string
	Measure MeasureOptions
}

// OptionsFromEnv are the default options with the mode EnvPeaks sets.
func OptionsFromEnv() (Options, error) {
	m, err := ModeFromEnv()
	return Options{Mode: m}, err
}

// ForDevice returns d's peaks: from the cache when it holds valid peaks of
// d's identity (DeviceIdentity), else measured (Measure) and written to
// the cache. The note says where they came from: the cache file, or why
// they were measured and whether they could be cached. A cache file that
// cannot be read or is corrupt is measured over, never a panic; a failed
// measurement is an error. With Mode Off it returns nil peaks.
func ForDevice(d *replay.Device, o Options) (p *Peaks, note string, err error) {
	if o.Mode == Off {
		return nil, fmt.Sprintf("not measured (%s=off)", EnvPeaks), nil
	}
	id, err := DeviceIdentity(d)
	if err != nil {
		return nil, "", err
	}
	dir, dirErr := o.Dir, error(nil)
	if dir == "" {
		dir, dirErr = CacheDir()
	}
	path := ""
	why := "refresh asked for"
	if dirErr == nil {
		path = CacheFile(dir, id)
		if o.Mode == Cached {
			c, err := ReadCache(path, id)
			var use *Peaks
			if use, why = cached(path, c, err); use != nil {
				return use, why, nil
			}
		}
	} else {
		why = dirErr.Error()
	}
	start := time.Now()
	if p, err = Measure(d, o.Measure); err != nil {
		return nil, "", err
	}
	note = fmt.Sprintf("measured in %s (%s)", time.Since(start).Round(10*time.Millisecond), why)
	switch {
	case path == "":
		note += "; not cached"
	default:
		if err := WriteCache(path, p); err != nil {
			note += "; not cached: " + err.Error()
		} else {
			note += "; cached in " + path
		}
	}
	return p, note, nil
}
