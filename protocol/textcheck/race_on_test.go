//go:build race

package textcheck

// raceEnabled: the race detector drops a quarter of what sync.Pool holds,
// so allocation counts are not the program's.
const raceEnabled = true
