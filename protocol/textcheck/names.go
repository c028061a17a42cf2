package textcheck

import (
	_ "embed"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// The name finder: a small named-entity tagger for people's names, which a
// lesson must not carry. A capitalised given name (generated list plus
// lists/names.txt) is a person when a surname follows it, when it owns
// something ("Alice's laptop"), when it acts ("Priya noticed"), or when a
// title comes before it; a title makes any capitalised word a name. Given
// names that are also words or tools ("Will", "Julia", "Jenkins") need a
// surname or a title.

//go:embed givennames.txt
var givenNamesTxt string

//go:embed lists/names.txt
var namesTxt string

var givenNames, nameTitles, notNames = loadNames()

func loadNames() (given, titles, not map[string]bool) {
	given, titles, not = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(givenNamesTxt, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			given[line] = true
		}
	}
	sets := map[string]map[string]bool{"given": given, "title": titles, "notname": not}
	for class, words := range parseSections(namesTxt) {
		set, ok := sets[class]
		if !ok {
			panic("textcheck: lists/names.txt has an unknown class [" + class + "]")
		}
		for _, w := range words {
			set[w] = true
		}
	}
	return given, titles, not
}

// findNames calls add for each person's name among the tokens.
func findNames(text string, toks []token, found *findings) {
	for i := 0; i < len(toks); i++ {
		t := &toks[i]
		if t.punct != 0 || !t.cap || t.code || t.e-t.s >= 2 && isUpperWord(text[t.s:t.e]) {
			continue // an acronym ("NAT", "ADA") is no name
		}
		titled := i > 0 && nameTitles[strings.TrimSuffix(toks[i-1].w, ".")] && toks[i-1].cap
		if i > 1 && toks[i-1].punct == '.' && nameTitles[toks[i-2].w] && toks[i-2].cap {
			titled = true // "Dr. Okafor"
		}
		first := t.w
		if k := strings.IndexByte(first, '-'); k > 0 {
			first = first[:k] // "Jean-Luc", "Ji-woo"
		}
		// The token's classes hold the name lists' bits for its own word.
		given := len(first) == len(t.w) && t.has(cGiven) || len(first) < len(t.w) && givenNames[first]
		if !given {
			if folded := foldLatin(first); folded != first {
				given = givenNames[folded]
			}
		}
		if !given && !titled {
			// Two capitalised words the lexicon does not know, after "by",
			// "and", a comma or a verb of saying, or before a verb:
			// "written by Olena Kovalenko", "Aleksandr Petrov reverted it".
			if unknownCapital(t) && i+1 < len(toks) && unknownCapital(&toks[i+1]) && !notNames[t.w] && !notNames[toks[i+1].w] &&
				(i > 0 && (toks[i-1].has(cPrep|cConj) || toks[i-1].punct == ',' || reportVerbs.has(&toks[i-1])) ||
					i+2 < len(toks) && toks[i+2].has(cPast) && !toks[i+2].has(cZ|cBase)) {
				found.add("name", t.s, toks[i+1].e)
				i++
			}
			continue
		}
		end := i
		for end+1 < len(toks) && isSurname(&toks[end+1]) {
			end++
		}
		surname := end > i
		// A given name that is also a word or a tool ("Will", "Julia") needs
		// a surname or a title.
		ambiguous := t.has(cNotName)
		if folded := foldLatin(first); !ambiguous && folded != t.w {
			ambiguous = notNames[folded]
		}
		switch {
		case titled || surname && !ambiguous:
		case ambiguous && surname && !toks[i+1].has(cKnown) && !isUpperWord(text[toks[i+1].s:toks[i+1].e]):
			// "Ruby Adeyemi", "Travis Okoro's": a tool's name with a family
			// name the lexicon does not know ("Ruby Gems", "Travis CI" stay).
		case ambiguous:
			continue
		case i+1 < len(toks) && toks[i+1].w == "'s":
		case i+1 < len(toks) && toks[i+1].w == "from" && i+2 < len(toks) && (toks[i+2].has(cDet) || toks[i+2].cap):
			// "Priya from IT", "Maria from the data team"
		case i > 0 && toks[i-1].w == "per" || i > 1 && toks[i-1].w == "to" && toks[i-2].w == "according":
		case i+1 < len(toks) && actsAt(&toks[i+1]):
		case i > 0 && (toks[i-1].has(cPrep|cConj) || toks[i-1].punct == ',' || reportVerbs.has(&toks[i-1]) ||
			toks[i-1].w == "told" || toks[i-1].w == "asked"):
		case i+2 < len(toks) && toks[i+1].has(cConj) && givenNames[toks[i+2].w] && toks[i+2].cap:
		default:
			continue
		}
		found.add("name", t.s, toks[end].e)
		i = end
	}
}

// actsAt: t is a verb a person does: "Bob said", "Priya noticed", "Linus
// merged it", "Kevin will".
func actsAt(t *token) bool {
	return (t.has(cPast|cPart|cZ) || t.has(cModal)) && !t.has(cDet|cPrep) && t.punct == 0
}

// isSurname: a capitalised word that is not a common word of the lexicon.
func isSurname(t *token) bool {
	if t.punct != 0 || !t.cap || t.code {
		return false
	}
	return !t.has(cKnown) || t.cls&^(cProper|cKnown|cNoun|cDomNoun) == 0 && t.has(cProper)
}

// unknownCapital: a capitalised word of letters that the lexicon does not
// know, not an acronym ("Kovalenko", "João").
func unknownCapital(t *token) bool {
	if t.punct != 0 || !t.cap || t.code || len(t.w) < 2 {
		return false
	}
	if t.has(cKnown) && !(t.has(cProper) && t.cls&cBase == 0) {
		return false
	}
	for i := 1; i < len(t.w); i++ {
		if c := t.w[i]; c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// foldLatin drops the accents of a name's Latin letters ("maría" →
// "maria") so the ASCII lists find it.
func foldLatin(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			var b strings.Builder
			for _, r := range norm.NFD.String(s) {
				if r < 0x80 {
					b.WriteRune(r)
				}
			}
			return strings.ToLower(b.String())
		}
	}
	return s
}
