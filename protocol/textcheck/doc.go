// Package textcheck holds the checks every lesson text (and every
// revocation reason) passes before an agent may read it (SPEC §6):
//
//   - Readable: no control character, and English (a text mostly in
//     another language or script is refused: the checks cannot read it).
//     github.com/abadojack/whatlanggo (the Go port of whatlang; trigram
//     profiles, 400 KB, no model to load) names the language, asked only
//     when the lexicon and a few English function words cannot call the
//     text English; lingua-go was rejected for its 124 MB of models.
//   - CheckObservation: the text says what happened and never tells the
//     reader what to do. It reads a normalised copy of the text (NFKC,
//     format characters removed, confusable letters folded to Latin per
//     Unicode TR39, line separators as sentence ends), tags every word
//     with a small lexicon tagger, and reads each clause with a grammar:
//     a command verb opening a clause, an obligation with any subject, an
//     impersonal directive, a directive header, or an injection phrase.
//     A logistic regression (model.go, features.go) then weighs the
//     grammar's verdict with the words and word classes of each sentence
//     and refuses a text whose most order-like sentence scores above its
//     threshold. It was trained by internal/trainmodel from testdata/
//     (go generate) and never learns at run time; injection phrases and
//     hidden characters are refused whatever it says. A text in capitals,
//     Title Case or a code span, and each line of a text of several, is
//     read again as plain sentences, so case and layout hide no order.
//   - FindRawData: what is private to a person, a machine, a project or
//     an organisation, or is a secret; public and well-known things
//     (system paths, public hosts, documented addresses and defaults) are
//     not raw. Rules and word lists find what has a shape; a second small
//     model (rawmodel.go) scores the words they leave, by their look and
//     context ("runs as abakshi").
//   - Pasted and CutOut: whether a sentence reads like tool output pasted
//     (every writer's) or like pieces the default writer cut and stitched
//     (CutOut, stricter, asked of the default writer only: a bare "X
//     fails.", a capital glued on after ";", a person's words spliced into
//     its correction frame); the node keeps such a sentence as a local
//     draft, never signed (SPEC §3). Neither runs on received lines.
//
// Editors change the word lists in lists/ and the labelled sets in
// testdata/, then run go generate; the grammar that reads the lists is in
// this package's Go files. lexicon.txt is generated from the prose/v2
// tagger's model by internal/genlexicon (a module of its own, so the node
// never links the model).
//
// The checks are pure and deterministic and run on every received line,
// after its signature verified. The package imports only the standard
// library, golang.org/x/text (NFKC), github.com/mtibben/confusables
// (TR39's table) and whatlanggo.
//
// Why a grammar and a small model, not a tagger or a large model at run
// time: github.com/jdkato/prose/v2 (pure Go, archived) loads its 9 MB model
// for every document (about 200 ms each here) and was trained on newswire,
// where imperatives are rare; its lexicon is still the best free source of
// which English words can be verbs, so internal/genlexicon distils it into
// lexicon.txt. The grammar alone, tuned until the sets it was built on
// scored 0.98–1.00, refused 0.83 of the instructions of a set nobody had
// studied; the model over its verdict generalises where the grammar was
// fitted (testdata/first_reads.md).
package textcheck

//go:generate sh -c "cd internal/genlexicon && go run . > ../../lexicon.txt && go run . -names > ../../givennames.txt"
//go:generate go run ./internal/trainmodel -out model.bin -report testdata/model_report.txt
//go:generate go run ./internal/trainmodel -raw -max-fp 0.005 -out rawmodel.bin -report testdata/rawmodel_report.txt
