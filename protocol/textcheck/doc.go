// Package textcheck holds the two checks every lesson text (and every
// revocation reason) passes before an agent may read it (SPEC §6):
//
//   - CheckObservation: the text says what happened and never tells the
//     reader what to do. It reads a normalised copy of the text (NFKC,
//     format characters removed, confusable letters folded to Latin per
//     Unicode TR39), tags every word with a small lexicon tagger, cuts the
//     text into clauses and reads each one: a command verb opening a clause,
//     an obligation with any subject, an impersonal directive, a directive
//     header, or an injection phrase makes it an instruction.
//   - FindRawData: paths, e-mail addresses, URLs with credentials or
//     queries, IP addresses, private host names, people's names and
//     secrets.
//
// Editors change the word lists in lists/ and nothing else; the grammar that
// reads them is in this package's Go files. lexicon.txt is generated from
// the prose/v2 tagger's model by internal/genlexicon (a module of its own, so
// the node never links the model).
//
// Both checks are pure, deterministic and cheap: they run on every received
// line, next to an Ed25519 verification. The package imports only the
// standard library, golang.org/x/text and the TR39 confusables table.
package textcheck

//go:generate sh -c "cd internal/genlexicon && go run . > ../../lexicon.txt && go run . -names > ../../givennames.txt"
