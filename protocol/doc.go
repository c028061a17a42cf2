// Package protocol holds the remem wire rules: identity, the lesson hash,
// canonical encoding, signing and verify-by-cut, the safety checks, the merge
// order, the strength function and the commons state function.
//
// It is pure on purpose: no I/O, no clock (time is always a parameter), no
// goroutines, and it imports nothing else of the project, so every transport
// and every tool shares exactly one definition of what a valid record is.
package protocol
