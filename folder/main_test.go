package folder

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine (a Watcher's Run) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
