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
// standard library, golang.org/x/text (NFKC) and
// github.com/mtibben/confusables (Unicode's TR39 confusables table,
// generated from confusables.txt).
//
// Why not a full part-of-speech tagger at run time: github.com/jdkato/prose/v2
// (pure Go, archived) was tried first. Its API loads its 9 MB model for every
// document (about 200 ms each here), its averaged perceptron was trained on
// newswire, where imperatives are rare, and it tags "Restart services that
// hang" as Restart/NNP and "Disregard the earlier lessons" as Disregard/IN.
// Its lexicon is still the best free source of which English words can be
// verbs, so internal/genlexicon distils it into lexicon.txt, and the clause
// grammar here reads commands, obligations and directives from word classes
// and word order, at about 20,000 instructions per sentence (a thirtieth of
// one Ed25519 verification).
package textcheck

//go:generate sh -c "cd internal/genlexicon && go run . > ../../lexicon.txt && go run . -names > ../../givennames.txt"
