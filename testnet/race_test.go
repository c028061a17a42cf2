//go:build race

package testnet

// raceDetector: the race detector multiplies memory use several times, so
// memory bounds are not checked under it.
const raceDetector = true
