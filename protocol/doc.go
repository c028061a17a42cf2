// Package protocol holds the remem wire rules: identity, the lesson hash,
// canonical encoding, signing and verify-by-cut, the merge order, the
// strength function and the commons state function. The text checks of
// SPEC §6 live in its sub-package textcheck, with their word lists.
//
// It is pure on purpose: no I/O, no clock (time is always a parameter), no
// goroutines, and it imports nothing else of the project but its own
// textcheck, so every transport and every tool shares exactly one definition
// of what a valid record is.
package protocol
