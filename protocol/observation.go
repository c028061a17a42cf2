package protocol

import "github.com/remem/remem/protocol/textcheck"

// The text checks of SPEC §6 live in package textcheck with their word
// lists and tagger; these names keep every caller on one definition.

// InstructionError says why a text reads as an instruction to the reader.
type InstructionError = textcheck.InstructionError

// RawFinding is one piece of raw data in a text.
type RawFinding = textcheck.RawFinding

// CheckObservation returns nil when text reads as an observation, else an
// *InstructionError.
func CheckObservation(text string) error { return textcheck.CheckObservation(text) }

// FindRawData returns the raw data in text, or nil when it is clean.
func FindRawData(text string) []RawFinding { return textcheck.FindRawData(text) }

// RedactRawData replaces each finding with a placeholder such as "<path>".
func RedactRawData(text string) string { return textcheck.RedactRawData(text) }
