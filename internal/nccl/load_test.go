package nccl

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

func TestLoadFailureNamesLibrary(t *testing.T) {
	err := dltest.LoadFailure(t, Load, ErrNotFound, func() string {
		v, _ := Version()
		return fmt.Sprintf("NCCL %s is installed (%s); the failure text cannot be checked here", VersionString(v), Path())
	})
	if !strings.Contains(err.Error(), "libnccl.so.2") {
		t.Errorf("Load error %q does not name libnccl.so.2", err)
	}
	if Path() != "" {
		t.Errorf("Path() = %q after a failed Load", Path())
	}
	if _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version: %v", err)
	}
	if _, err := GetUniqueID(); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetUniqueID: %v", err)
	}
	if _, err := CommInitAll([]int{0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CommInitAll: %v", err)
	}
	if _, err := CommInitRank(1, UniqueID{}, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("CommInitRank: %v", err)
	}
	if err := GroupStart(); !errors.Is(err, ErrNotFound) {
		t.Errorf("GroupStart: %v", err)
	}
	if err := GroupEnd(); !errors.Is(err, ErrNotFound) {
		t.Errorf("GroupEnd: %v", err)
	}
	var c *Comm
	if s := c.LastError(); s != "" {
		t.Errorf("LastError without a library: %q", s)
	}
}

func TestNilComm(t *testing.T) {
	var c *Comm
	if err := c.Destroy(); err != nil {
		t.Errorf("Destroy on nil: %v", err)
	}
	if err := c.Abort(); err != nil {
		t.Errorf("Abort on nil: %v", err)
	}
	if c.Ptr() != nil {
		t.Error("Ptr of nil is not nil")
	}
	calls := map[string]error{
		"ncclAllReduce":     c.AllReduce(0, 0, 1, Float16, Sum, nil),
		"ncclAllGather":     c.AllGather(0, 0, 1, Float16, nil),
		"ncclReduceScatter": c.ReduceScatter(0, 0, 1, Float16, Sum, nil),
		"ncclBroadcast":     c.Broadcast(0, 0, 1, Float16, 0, nil),
	}
	for _, q := range []struct {
		fn string
		f  func() (int, error)
	}{{"ncclCommCount", c.Count}, {"ncclCommCuDevice", c.CuDevice}, {"ncclCommUserRank", c.UserRank}} {
		_, calls[q.fn] = q.f()
	}
	for fn, err := range calls {
		if !errors.Is(err, ErrNilComm) || !strings.HasPrefix(err.Error(), fn+": ") {
			t.Errorf("%s on a nil communicator: %v", fn, err)
		}
	}
	destroyed := &Comm{}
	if err := destroyed.AllReduce(0, 0, 1, Float16, Sum, nil); !errors.Is(err, ErrNilComm) {
		t.Errorf("AllReduce on a destroyed communicator: %v", err)
	}
}

func TestArgumentChecks(t *testing.T) {
	if _, err := CommInitAll(nil); err == nil {
		t.Error("CommInitAll of no devices succeeded")
	}
	if _, err := CommInitRank(2, UniqueID{}, 2); err == nil {
		t.Error("CommInitRank rank 2 of 2 succeeded")
	}
	if err := count("ncclAllReduce", "count", -1); err == nil || !strings.Contains(err.Error(), "ncclAllReduce") {
		t.Errorf("negative count: %v", err)
	}
}

func TestDisableNVLS(t *testing.T) {
	t.Setenv(NVLSEnv, "") // restores the original value afterwards
	os.Unsetenv(NVLSEnv)
	if !DisableNVLS() {
		t.Error("DisableNVLS did not set an unset variable")
	}
	if v, ok := os.LookupEnv(NVLSEnv); !ok || v != "0" {
		t.Errorf("%s = %q, %v after DisableNVLS", NVLSEnv, v, ok)
	}
	if DisableNVLS() {
		t.Error("DisableNVLS set the variable a second time")
	}
	os.Setenv(NVLSEnv, "1")
	if DisableNVLS() || os.Getenv(NVLSEnv) != "1" {
		t.Errorf("DisableNVLS overrode an explicit setting: %q", os.Getenv(NVLSEnv))
	}
}

// Load sets NCCL_NVLS_ENABLE=0 before opening the library, whether or not
// the library is there.
func TestLoadDisablesNVLS(t *testing.T) {
	if Path() != "" {
		t.Skip("NCCL already loaded in this process")
	}
	t.Setenv(NVLSEnv, "")
	os.Unsetenv(NVLSEnv)
	Load()
	if v := os.Getenv(NVLSEnv); v != "0" {
		t.Errorf("after Load, %s = %q", NVLSEnv, v)
	}
}

func TestUniqueIDSize(t *testing.T) {
	if UniqueIDBytes != 128 || uniqueIDSize != 128 || unsafe.Sizeof(UniqueID{}) != 128 {
		t.Errorf("UniqueIDBytes %d, C size %d, Go size %d; nccl.h says 128", UniqueIDBytes, uniqueIDSize, unsafe.Sizeof(UniqueID{}))
	}
}

// Loading itself is package dl's; this checks what the package gives it.
func TestSymbols(t *testing.T) { dltest.CheckLibrary(t, &lib, "ncclGetVersion") }
