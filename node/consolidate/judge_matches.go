package consolidate

import "context"

// matches is Matches with a judge: the base similarity's index finds, for
// each group, the texts that share anything with it (a positive linkage;
// a pair that shares nothing scores 0, which is never in doubt while
// Threshold-Band is above 0), and only those pairs are scored again with
// the judged similarity, whose budget bounds the questions. So a sleep's
// verify pass asks the model about the candidates an event nearly
// matches, as clustering does, without scoring every pair.
func (j *JudgedSimilarity) matches(ctx context.Context, threshold float64, groups []Group, texts []string) ([][]int, error) {
	band := j.Band
	if band <= 0 {
		band = DefaultJudgeBand
	}
	out := make([][]int, len(groups))
	touched := make([][]int, len(groups))
	if j.Threshold-band > 0 && threshold > 0 {
		var err error
		if touched, err = Matches(ctx, j.Base, 1e-9, groups, texts); err != nil {
			return nil, err
		}
	} else {
		for gi := range groups {
			for ti := range texts {
				touched[gi] = append(touched[gi], ti)
			}
		}
	}
	for gi, g := range groups {
		for _, ti := range touched[gi] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s, err := Linkage(ctx, j, texts[ti], g)
			if err != nil {
				return nil, err
			}
			if s >= threshold {
				out[gi] = append(out[gi], ti)
			}
		}
	}
	return out, nil
}
