package predict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two set files of one workload are an error naming both files.
func TestReadSetFilesClash(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "bench", "bloom_560m_prefill", "set.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadSetFiles([]string{a}); err != nil {
		t.Fatal(err)
	}
	_, err = ReadSetFiles([]string{a, b})
	if err == nil || !strings.Contains(err.Error(), a+" and "+b) || !strings.Contains(err.Error(), "bloom-560m_prefill") {
		t.Errorf("clash: %v", err)
	}
}
