package agents

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// A prompt reads as a correction when the person says that what the agent
// just did, said or is doing was a mistake. The reading is by cue, not by
// model: no model runs in a hook, which must answer within milliseconds.
// A cue either opens the prompt ("no, …", "wait, …", "undo that") or
// anywhere ties a fault to the agent ("you broke …", "your change …",
// "I said …", "still failing"). What only shares words with a correction
// (a fresh task to fix a bug, "stop the dev server", "revert commit abc" on
// a release branch, "no rush") has no cue and is not one.
//
// Correction gives the cue it found ("" for none), so a person can see why.
func Correction(prompt string) (bool, string) {
	text, opened := normalisePrompt(prompt)
	if text == "" {
		return false, ""
	}
	cues := correctionRules()
	for _, g := range cues.not {
		if g.MatchString(text) || g.MatchString(opened) {
			return false, ""
		}
	}
	for _, c := range cues.cues {
		if c.re.MatchString(text) {
			return true, c.name
		}
	}
	return false, ""
}

// normalisePrompt lowers the prompt, straightens quotes and apostrophes,
// and reduces every run of white space to one space; a quoted block or
// fenced code the person pasted is dropped after its first line, so pasted
// output cannot carry a cue of its own.
//
// It gives the text with the fillers that open it dropped ("hmm, ok, no
// …" reads as "no …"), and as it was opened, which the guards read too
// ("sorry, I meant …" is the person correcting themselves).
func normalisePrompt(s string) (text, opened string) {
	if len(s) > 4000 {
		s = s[:4000]
	}
	s = fenced.ReplaceAllString(s, " ")
	if i := strings.Index(s, "```"); i >= 0 {
		s = s[:i] // an unclosed fence: all after it was pasted
	}
	s = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`, "\u2014", " - ", "\u2013", " - ").Replace(s)
	s = strings.ToLower(s)
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	return fillers.ReplaceAllString(s, ""), s
}

// fenced is a block of pasted code or output.
var fenced = regexp.MustCompile("(?s)```.*?```")

// fillers open a prompt without changing what it says.
var fillers = regexp.MustCompile(`^(?:(?:um+|uh+|erm|hmm+|hm+|hey|hi|hello|so|ok|okay|well|sorry|oh|ah|yo|listen|look)[,.!]* )+`)

type cue struct {
	name string
	re   *regexp.Regexp
}

// Word boundaries: Go's \b is ASCII-only, which is what the English cues need.
func at(name, pattern string) cue { return cue{name, regexp.MustCompile(`^(?:` + pattern + `)`)} }

// word is a cue of whole words anywhere: "annulla" is a cue, "annullare"
// (to undo, as in a feature to build) is not.
func word(name, pattern string) cue {
	return cue{name, regexp.MustCompile(`(?:^|[^\pL\pN_'])(?:` + pattern + `)(?:$|[^\pL\pN_])`)}
}

// raw is a cue whose pattern says itself where it may start.
func raw(name, pattern string) cue { return cue{name, regexp.MustCompile(pattern)} }

func anywhere(name, pattern string) cue {
	return cue{name, regexp.MustCompile(`(?:^|[^\pL\pN_'])(?:` + pattern + `)`)}
}

// The agent, its work and its claims as the subject of a fault.
const (
	thatWork = `(?:that|this|it|those|these|them|what you (?:just )?did|your (?:changes?|edits?|last \w+)|the last (?:change|edit|commit|step)|everything|all of (?:that|it|this))`
	// Deeds that are a fault whoever reports them, and deeds that are one
	// only when the sentence opens on them ("you changed the port", not
	// "summarise what you changed").
	faultDeeds   = `broke|broken|deleted|removed|dropped|wiped|overwrote|overwritten|reverted|reintroduced|forgot|forgotten|missed|ignored|skipped|introduced|hardcoded|hard-coded|hallucinated|invented|made up|messed|commented out|disabled|mocked|stubbed|force[- ]pushed|duplicated|misread|misunderstood|mixed up|undid|lost|killed|nuked|clobbered|trashed|screwed`
	neutralDeeds = `changed|modified|rewrote|rewritten|moved|touched|edited|renamed|replaced|put|added|used|left|created|installed|upgraded|downgraded|bumped|inlined|pushed|committed|set|made|wrote|picked|chose|switched|turned`
	workNouns    = `changes?|edits?|fix|fixes|patch|commit|refactor(?:ing)?|code|migration|script|version|implementation|approach|update|suggestion|pr|diff|rewrite|branch|loop|function|query|regex|test|tests|handler|logic|config|last (?:change|edit|commit|attempt|step)`
	faultWords   = `broke|breaks|broken|break|fails?|failed|failing|doesn't|does not|didn't|did not|isn't|is not|wasn't|won't|can't|caused|introduced|is wrong|was wrong|regressed|crashes|crashed`
)

// correctionRules compiles the cues on the first prompt read: a hook that
// reads no prompt (most of them) does not pay for them at start.
var correctionRules = sync.OnceValue(func() struct {
	cues []cue
	not  []*regexp.Regexp
} {
	return struct {
		cues []cue
		not  []*regexp.Regexp
	}{correctionCues(), notCorrection()}
})

func correctionCues() []cue {
	return []cue{
		// Openers.
		at("rejection", `(?:no+|nope|nah|nein|non|não|nao|нет|ne)(?: (?:no+|nope))*(?:[,.!?:;]|$| no\b)|(?:no+|nope|nah) (?:that|this|it|you|i|we|don't|do not|not|the|wrong|stop|wait|use|put|keep|revert|undo|just|thats|why|please|leave|go|change)\b|so nicht\b`),
		at("rejection", `(?:wrong|incorrect)(?: [\w.-]+){0,3}(?:[,.!?:;]|$)|(?:not quite|not right|not that|not this|not what|nothing like)\b`),
		at("rejection", `(?:that|this|it)(?:'s| is) the (?:old|wrong|previous|outdated|deprecated|compiled|generated|old)\b`),
		at("rejection", `(?:that|this|it)(?:'s| is|s)(?: (?:still|just|all|completely|totally|clearly))? (?:not (?:what|right|correct|it|the|how|quite|working)|wrong|incorrect|broken|worse|overkill|too (?:much|complex|complicated)|unnecessary|way too|backwards|the wrong)`),
		at("rejection", `(?:that|this|it) (?:isn't|wasn't|is not|was not|doesn't|does not|didn't|did not) (?:what|right|correct|work|look right|compile|build|fix|help|run|do)`),
		at("interrupt", `(?:wait|hold on|hang on|whoa|woah|stop|halt|abort|cancel)(?:[!.,:;?-]|\s*$| (?:what|why|no|don't|do not|that|this|you|please|stop|before|i|we|it|wait|stop|everything|now)\b)|(?:ctrl-c|ctrl\+c|kill|abort|cancel) (?:that|this|it)\b|(?:stay|keep) out of\b|hands off\b`),
		at("interrupt", `stop (?:doing|changing|adding|editing|touching|deleting|removing|using|making|rewriting|creating|running|trying|it|that|this|now|please|right there|here)\b`),
		at("frustration", `(?:ugh|argh|wtf|seriously|come on|dude|bruh|jeez|sigh|facepalm)\b`),
		at("overreach", `(?:simpler|simplify|too (?:complex|complicated|long|verbose|much)|less (?:code|verbose|complicated))(?:[,.!?]|$| please)`),
		at("question", `(?:why|how come) (?:did|would|are|were|do|have|is|'d|has) you\b|what (?:did|have|'d|were) you (?:do|done|doing|thinking|change|changed)\b|is there a reason (?:you|why you)\b|since when (?:does|do|did|is|are)\b`),
		at("question", `(?:did|have) you (?:really |actually |seriously )?just\b`),
		at("question", `(?:why|how come) (?:is|are|did|does|was) (?:there|it|this|that|the \w+) (?:now |still |suddenly |gone|missing|deleted|removed|changed|using|calling|broken|failing|empty|different)`),
		at("question", `(?:did|have|are) you (?:just|really|actually|seriously)?\s*(?:delete|remove|break|drop|change|rename|overwrite|force|push|commit|revert|touch|edit|ignore|forget|skip|hardcode|hard-code|disable|comment|install|upgrade|wipe|run|mock)\w*`),
		at("question", `(?:are you sure|is that (?:right|correct|true)|are you certain|really\?|that can't be right)`),
		at("question", `(?:shouldn't|should not|wouldn't|isn't|aren't|doesn't|don't|didn't) (?:this|that|it|we|you|the \w+|there) (?:be|have|need|use|go|return|call|still|also|already|supposed)\b|(?:isn't|doesn't|wouldn't|won't|shouldn't|couldn't|aren't|won't) (?:that|this|it|these|those)\b`),
		at("question", `why (?:is|are|does|do) [^?]{1,60}\bnow\b`),
		at("question", `where did (?:the|my|our|all the|all my|that|this)? ?[\w./-]+(?: [\w./-]+)? go\b|what happened to (?:the|my|our)\b`),
		at("undo", `(?:undo|revert|roll ?back|put|change|switch|bring|restore|set)(?: it| that| this| them| those| everything| all)?(?: back| that| this| it| everything| your| the last| what you)`),
		at("instead", `actually,? (?:(?:please |can you |could you )?(?:use|make|do|keep|leave|put|go with|switch)|i (?:meant|wanted|said|asked)|(?:that|it|this)(?:'s| is| was)|no\b|don't|do not|you)`),
		// Anywhere.
		anywhere("undo", `(?:undo|revert|roll back|rollback|put back|restore|reverse|back out)(?: all| all of)? `+thatWork+`\b`),
		anywhere("undo", `(?:put|change|set|switch|bring|turn) (?:it|that|this|them|those|everything|the \w+(?: \w+){0,2}) back\b`),
		anywhere("undo", `(?:revert|roll ?back|undo|discard|drop|throw away|get rid of) (?:all )?the (?:\w+ )?(?:changes?|edits?|formatting|modifications|rename|renaming|refactor|refactoring|reformatting)\b|git (?:checkout|restore) (?:the|that|this)\b`),
		anywhere("undo", `(?:go|get|switch|roll) back to (?:the |how it was|what it was|the way|the old|the previous|before)`),
		anywhere("agent-fault", `you(?:'ve| have| just| also| completely| totally| accidentally| somehow| clearly| again| now)* (?:`+faultDeeds+`)\b`),
		raw("agent-fault", `(?:^|[.!?;:,] |\b(?:but|and|ok|so|now|hmm|well) )you(?:'ve| have| just| also| completely| totally| accidentally| somehow| clearly| again| now)* (?:`+neutralDeeds+`)\b`),
		anywhere("agent-fault", `you(?:'re| are) \w+ing\b|you (?:can't|cannot|can not) just\b|you have (?:it|this|that|them|the \w+) (?:set|as|at|on|pointing|going|hardcoded|hard-coded|wrong|backwards|reversed)\b`),
		anywhere("agent-fault", `you (?:said|claimed|told me|promised)\b[^.?!]{0,80}\b(?:but|would|wouldn't|will|won't|was|were|is|isn't|does|doesn't|did|didn't|works?|pass|passes|passed)\b|(?:that's|that is|this is|it's|it is|that was) (?:not true|false|untrue|incorrect|not correct|not how|not what)|^not true\b`),
		anywhere("agent-fault", `(?:your|the new|the updated|the generated|this new) (?:\w+ )?(?:\w+) (?:is|are|was|were) (?:missing|off by|broken|wrong|leaking|racy|buggy|incorrect|backwards|reversed|not (?:\w+ing|right|correct|what))|(?:your|the) (?:\w+ )?(?:`+workNouns+`) (?:just|only|still|now|also|did this|caused this|did that|caused that)\b`),
		anywhere("agent-fault", `you(?:'re| are| were|'ve been| keep| kept) (?:still |now |again |just )?(?:editing|changing|using|looking at|in|on|touching|modifying|running|calling|importing|writing|adding|deleting|removing|breaking|ignoring|making|doing|overcomplicating|over-engineering|overengineering|overthinking|hallucinating|guessing|going in circles|confusing|mixing)\b`),
		anywhere("agent-fault", `you (?:didn't|did not|haven't|have not|never|don't|do not|forgot to|failed to|missed|skipped|only|still haven't|still didn't|still don't)(?: even| actually| really)? (?:fix|change|update|run|read|test|check|add|remove|handle|follow|listen|do|use|commit|save|touch|understand|include|import|actually)\b`),
		anywhere("agent-fault", `you (?:were|are|weren't|were not|aren't|are not) (?:supposed|meant|asked|told) to\b|(?:weren't|wasn't|were not|was not) (?:supposed|meant|asked for|needed)\b|(?:it's|it is|that's|that is|this is|they're|it was|that was) supposed to\b|(?:that|this|it) belongs (?:in|to|under)\b`),
		anywhere("agent-fault", `you should(?:n't| not)? have (?:\w+ed|done|written|made|run|gone|seen|known|left|put|taken|kept|broken|thrown|read the|asked|checked|tested|used)\b|you (?:shouldn't|should not|don't need|do not need)\b|you have an? (?:off-by-one|bug|typo|error|mistake|race|leak|extra|missing|stray|duplicate)\b|you mixed (?:\w+ )?up\b`),
		// The agent's own work named as such: "the script you wrote …".
		anywhere("agent-work", `(?:the|this|that|your) (?:[\w./-]+ ){1,3}you (?:just )?(?:wrote|generated|added|made|created|did|copied|put|used|changed|edited|produced|pushed|committed|gave me|suggested|proposed|picked|chose|set up|configured|opened|sent)\b|like you did\b|(?:did|done) to (?:the|my|our)\b`),
		raw("agent-fault", `(?:^|[.,;:!?] |\b(?:that's|because|since|but|and|so) )you \w+ [^.?!]{0,60}\b(?:instead of|rather than|after|before)\b`),
		anywhere("agent-fault", `(?:your|the) (?:`+workNouns+`)(?: you (?:just )?(?:made|did|wrote|pushed|added))? (?:`+faultWords+`)\b`),
		anywhere("agent-fault", `(?:since|after|before|with|from|on|in) your (?:\w+ )?(?:`+workNouns+`)\b`),
		anywhere("agent-fault", `(?:who|what) (?:asked|told) you to\b`),
		anywhere("agent-fault", `(?:i|we) (?:didn't|did not|never|don't|do not) (?:ask|want|need|tell|say|request|approve|mention)\w* (?:you |for |this|that|it|any|to|a |an |the |those|these)|(?:i|we) only (?:asked|wanted|said|needed|told)\b|leave (?:the|my|that|this|those|it|them|our)(?: [\w./-]+){0,3} alone\b`),
		at("dont", `(?:please )?(?:don't|dont|do not) (?:send|solve|go|deploy|push|install|touch|reformat|rewrite|mock|delete|remove|rename|move|hardcode|change|modify|edit|add|commit|push|wrap|inline|duplicate|comment out|disable|skip)\b`),
		at("instead", `(?:please )?(?:use|try|go with|switch to|keep) [^,.;]{1,30} instead(?:[,.!;]|$| we| i | it| this| please)`),
		anywhere("earlier-word", `(?:i|we)(?:'ve| have)? (?:said|told you|asked (?:you|for)|specifically|explicitly|clearly|literally)\b`),
		anywhere("earlier-word", `(?:i|we) (?:meant|wanted|asked for|was asking|mentioned)\b|didn't (?:i|we) (?:say|ask|tell|agree)|we agreed\b|the (?:instructions?|rule|ticket|spec|task) (?:was|were|said|says)\b|who asked for\b`),
		anywhere("earlier-word", `(?:as|like) i (?:said|mentioned|asked|told you)\b|read (?:my|the) (?:message|prompt|instructions?|request) again|not what i (?:asked|wanted|meant|said)|that's not what|misunderstanding|misunderstood|(?:isn't|is not|not) quite (?:right|what|it)|(?:isn't|is not|not) (?:ok|okay|acceptable)\b|unacceptable`),
		anywhere("frustration", `(?:did|doing|done) it again|['"](?:optimization|optimisation|minimal change|simplification|improvement)['"]|(?:second|third|fourth|fifth|\d+(?:nd|rd|th)) time\b|yet again|once again|what could (?:possibly )?go wrong|['"](?:fix|fixed|improvement|refactor|cleanup|working)['"]`),
		anywhere("regression", `(?:was|were|used to be|'s been) (?:all )?(?:working|passing|green|fine|compiling|building|ok|okay)(?: fine| perfectly| ok)? (?:before|until|on main|yesterday|earlier)\b`),
		raw("regression", `(?:^|[,.!?;:] |\b(?:but|ok|okay|great|and|wow|cool|nice|perfect|so) )now (?:\S+ ){0,6}?(?:gone|missing|blank|empty|broken|fail\w*|crash\w*|error\w*|undefined|null|nan|nothing|won't|doesn't|does not|can't|isn't|stopped|hangs|hanging|frozen|dead|down|\d+ failures)`),
		anywhere("regression", `^(?:it|this|that)(?:'s| is) still \w+ing\b`),
		anywhere("regression", `(?:worked|passed|compiled|built) (?:fine |perfectly )?(?:before|until) (?:you|your|this|that|the change)`),
		anywhere("regression", `(?:now|and now) (?:it|the \w+|everything|nothing|all|my \w+)(?: \w+)? (?:fails?|is failing|breaks|is broken|crashes|won't|doesn't|does not|can't|errors)\b`),
		anywhere("regression", `^(?:still|same) (?:fail|failing|broken|error|errors|issue|problem|thing|result|bug|crash|output|doesn't|does not|not working)|(?:it|this|that) (?:still|again) (?:fails?|doesn't|does not|breaks|crashes|errors|gives|throws|returns)\b|(?:didn't|did not|doesn't|does not) (?:fix|solve|help|change anything)\b|(?:same|still the same) (?:error|issue|problem|failure|thing)\b`),
		anywhere("overreach", `(?:overkill|over-?engineer\w*|over-?complicat\w*|way too (?:much|complex|complicated|many|long)|too complicated|way more than i|more than i asked|not asked for|wasn't asked|nobody asked|didn't ask for|unnecessary changes?)`),
		anywhere("overreach", `don't (?:do|touch|change) (?:that|this|it)(?: again)?\b|please don't do that|stop (?:doing|changing|touching|adding|editing|deleting|removing|rewriting) `),
		anywhere("wrong-thing", `(?:the|that's the|this is the|it's the|you're in the|using the|in the|on the|a|that|this) wrong (?:file|branch|dir|directory|folder|repo|project|function|method|class|module|package|service|table|db|database|env|environment|config|version|api|endpoint|component|test|one|place|line|namespace|cluster|account|region|key|column|path|name|model|library|tool|command|approach|port|host|image|tag|variable|field|thing|parameters?|params|arguments?|args|type|types|value|values|format|unit|units|order|case|date|time|timezone|encoding|status code|icon|colou?r|label|text|message|query|url|link|id|ids|assumption|answer)\b`),
		anywhere("wrong-thing", `(?:doesn't|does not|don't|do not) (?:look|seem|sound) (?:right|correct)|looks (?:wrong|off|broken)|(?:this|that|it|these|those)(?: \w+)? (?:is|are|was|were) (?:wrong|incorrect|not correct|not right)\b|isn't (?:right|correct)|(?:is|are|'s) not a (?:real )?(?:fix|solution)\b|isn't a (?:real )?(?:fix|solution)\b`),
		anywhere("wrong-thing", `(?:that|this|it) (?:doesn't|does not|won't|will not|can't) exist|(?:there is|there's) no (?:such|\w+ (?:called|named))|doesn't have (?:a|an|that) (?:method|function|flag|option|api)|(?:made|making) (?:that|it|this) up|not a real (?:flag|option|api|method|function|command)`),
		// The agent's work named as "your …": in a chat with an agent it is
		// almost always what the person finds fault with (your question, your
		// time and your call are guarded).
		anywhere("agent-work", `yours\b|your (?:[\w./'-]+ ){0,2}(?:is|are|was|were|says|said|has|have|does|doesn't|do|don't|uses|used|removes|removed|adds|added|starts|returns|writes|asserts|made|makes|breaks|broke|skips|misses|only|still|just|did|caused|describes|calls|sets|changes|changed)\b|(?:in|on|from|of|with|since|after) your \w+`),
		anywhere("agent-fault", `(?:since|after|when|because) you (?:\w+ed|made|put|broke|wrote|did|set|ran|built|bound|left|took|gave|got)\b|did you (?:actually|even|really|just) \w+|you (?:\w+ed|built|bound|wrote|made|set|put|left|took) (?:[^.?!]{0,40})\b(?:instead of|rather than|so it|so the|which|that's why|but)\b`),
		anywhere("agent-fault", `(?:that's|that is|it's|this is) (?:a |an )?(?:hallucinat\w*|deprecated|not a (?:real )?(?:fix|solution|flag|option|thing))|made it (?:slower|worse|fail|break)|still (?:fails|failing|there|broken|wrong|skipped|missing|happens|the same)\b|like it was before|as it was before|the way it was\b`),
		anywhere("agent-fault", `\b(?:is|are|should be|must be|needs to be|has to be|it's|its|wants|want|expected|meant|called|named|spelled)\b[^.?!]{1,40}, not\b|(?:that|this|the|your) plan (?:would|will)\b|looks good (?:except|but)\b`),
		anywhere("after-praise", `(?:nice|great|good|appreciate\w*|thanks|thank you|love|cool|legal|super|interesting)\b[^.!?]{0,60}[.!,]? (?:but|though|however|aber|mas|pero|mais|ma)\b`),
		// Other languages: rejections and undos people type.
		word("foreign", `(?:eso|esto) no\b|está mal|esta mal|incorrecto|te dije|no es (?:lo que|eso|así)|deshaz|revierte|rompiste|borraste|eliminaste|no toques|vuelve a|no era eso`),
		word("foreign", `está errado|esta errado|errado|eu disse|eu pedi|desfaz|desfaça|reverte|você quebrou|voce quebrou|você apagou|não é isso|nao e isso|não era isso|volta`),
		word("foreign", `falsch|das ist nicht|das war nicht|ich habe (?:gesagt|doch gesagt|dir gesagt)|ich sagte|rückgängig|ruckgangig|kaputt gemacht|du hast|nicht das|mach das weg`),
		word("foreign", `c'est faux|ce n'est pas|c'est pas|pas ça|pas ca|j'ai dit|je t'ai dit|annule|tu as cassé|tu as supprimé|tu as (?:oublié|effacé|changé|modifié)|remets`),
		word("foreign", `sbagliato|non è (?:quello|così|giusto)|ho detto|annulla|hai rotto|hai cancellato|hai (?:eliminato|modificato|dimenticato)|rimetti`),
		word("foreign", `не так|неправильно|неверно|я же (?:сказал|просил)|я сказал|верни|ты сломал|ты удалил|откати|зачем ты|не то`),
		raw("foreign", `不对|不對|错了|錯了|不是这样|不是這樣|我说的是|我說的是|撤销|撤銷|改回|别改|別改|回滚|回滾|你把|怎么又|搞错|弄错|删掉了|删了`),
		raw("foreign", `違う|ちがう|違います|戻して|元に戻|そうじゃな|間違|消さないで|壊れ|勝手に`),
		raw("foreign", `아니|틀렸|그게 아니|되돌려|원래대로|왜 지웠|망가`),
		word("foreign", `niet goed|dat is niet|je hebt|jouw wijziging|sinds jouw|dat klopt niet|błędne|błędnie|nie ten|zmieniłeś|zmieniłaś|chodziło mi|usunąłeś|yanlış|silmişsin|geri al|değil|bozdun|sai kết quả|nhầm|bạn đã xóa|bạn đã sửa|khôi phục|te equivocaste|te has equivocado|hai scritto|che hai|den du|die du|das du|du hattest|você (?:trocou|mudou|apagou|quebrou|esqueceu|removeu)|стоп|ты собрался|зачем`),
		raw("foreign", `ليس ما طلبته|حذفت|بالخطأ|خطأ|أعد|あなたが書いた|正しくは|直して|되돌리|잘못|你的解释|你写的|你改的`),
		word("foreign", `galat|maine kaha|maine bola|wapas karo|nahi chahiye tha|kyun (?:kiya|badla|hataya)|mat karo`),
	}
}

// notCorrection: prompts that open like a correction and are not one.
func notCorrection() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^no (?:rush|hurry|worries|worry|problem|pressure|need|thanks|thank you|biggie|prob)\b`),
		regexp.MustCompile(`^(?:wait|hold on) (?:for|until|till|a (?:sec|second|minute|moment)(?: for| until|,? then))\b`),
		regexp.MustCompile(`^stop (?:the|all|my|our|any|every|that (?:server|container|process|job|service))\b(?: \S+)? (?:server|servers|container|containers|process|processes|job|jobs|service|services|daemon|worker|workers|watcher|pod|pods|cluster|vm|vms|instance|instances|deploy|deployment|build|tunnel|emulator|simulator)`),
		regexp.MustCompile(`^(?:no|nope|nein|nah)[,.]? (?:that's (?:all|it)|that is all|thanks|thank you|danke|das reicht|idea|clue|preference|i don't have|hay prisa|(?:[^,.]{1,30} )?for now)\b`),
		regexp.MustCompile(`just curious|out of curiosity|i'm curious|exactly what i (?:wanted|asked|meant|needed)|just what i (?:wanted|needed)|^(?:something|what)(?:'s| is) wrong\b|(?:^|[,.] )(?:someone|somebody|a colleague|my colleague|a coworker|dependabot|renovate)\b|\bi (?:accidentally |mistakenly |just )?(?:deleted|removed|broke|lost|overwrote|dropped)\b|you(?:'re| are) (?:doing )?(?:great|good|well|awesome|amazing|close|right|on the right track)\b|^my bad\b|^oops\b`),
		// Answers that decline what was offered, in several languages.
		regexp.MustCompile(`^(?:no|nope|nah|non|nein|não|아니요|아니)[,.]? (?:(?:we|i|you) (?:don't|do not) (?:need|have)|no need|not needed)\b|non serve|no hace falta|no necesito|pas besoin|nicht nötig|brauche ich nicht|não preciso|필요 없|不需要|要らない|いらない|не нужно`),
		// The person correcting themselves, or their own work.
		regexp.MustCompile(`\b(?:my mistake|my bad|my fault|i misspoke|scratch what i said|i forgot to mention|i was looking at|wrong paste|i pasted the wrong|i gave you the wrong|i messed up|i screwed up|my own|i have a problem|i'm having (?:a|an|trouble))\b|^(?:sorry|oops|oh|ah)[,.!]* i (?:meant|forgot|was|pasted|gave|misspoke)\b|\b(?:function|code|script|query|regex|test|class|component) i (?:wrote|made|added)\b`),
		// Praise of the agent's work, and constraints for work to come.
		regexp.MustCompile(`\byou (?:added|wrote|made|did|built|created)\b[^.!?]{0,40}\b(?:pass|passes|passing|work|works|working|great|good|perfect|fine|nice|solid)\b`),
		regexp.MustCompile(`^(?:please )?(?:don't|do not|never) .{0,60}\b(?:while you|when you|as you|for (?:this|the) (?:task|change|ticket))\b`),
		// A review of someone else's work for mistakes.
		regexp.MustCompile(`\b(?:review|check) (?:my colleague's|a colleague's|someone's|their|his|her|the) (?:pr|pull request|code|changes|merge request)\b|レビューして`),
		regexp.MustCompile(`\byour (?:question|time|call|choice|opinion|take|thoughts|help|input|turn)\b|(?:but|though) (?:can|could) you (?:also|now)\b|but (?:also|one more)\b`),
		regexp.MustCompile(`^actually,? (?:one more|also|another|and|can you also|could you also|while you're|while you are|i (?:also|forgot to mention)|let's also|what about|quick question)\b`),
	}
}
