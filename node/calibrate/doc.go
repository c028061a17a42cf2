// Package calibrate measures how a memory's writer and similarity turn a
// person's own events into lessons, on labelled rows: each row is a set of
// events with the lessons they should make (the groups), the key facts
// each lesson should keep and the private strings no lesson that may be
// published should hold. Clusters gives each row a fresh memory, ingests
// its events through the normal ingest path, runs one sleep and scores the
// lessons written. `remem calibrate --clusters` is its command line.
// Pairs scores labelled pairs of texts with a similarity and picks the
// threshold with the best F1 (`remem calibrate --pairs`).
//
// calibrate imports node, node/consolidate, store and protocol; nothing of
// the project imports calibrate but the CLI.
package calibrate
