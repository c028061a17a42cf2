module github.com/remem/remem/protocol/textcheck/internal/genlexicon

go 1.26

require (
	github.com/brianvoe/gofakeit/v7 v7.18.4
	github.com/jdkato/prose/v2 v2.0.0
)

require (
	github.com/deckarep/golang-set v1.7.1 // indirect
	github.com/mingrammer/commonregex v1.0.1 // indirect
	gonum.org/v1/gonum v0.7.0 // indirect
	gopkg.in/neurosnap/sentences.v1 v1.0.6 // indirect
)
