package replay

import (
	"fmt"
	"time"
)

// eta is a progress line's estimate of the time left: ", ~D left", the
// time so far over the signatures done times those left, or "" before
// the first is done and after the last. It is rough: the largest
// signatures come first and take the longest (their energy windows).
func eta(start time.Time, done, total int) string {
	if done <= 0 || done >= total {
		return ""
	}
	left := time.Since(start) / time.Duration(done) * time.Duration(total-done)
	return fmt.Sprintf(", ~%s left", left.Round(time.Second))
}
