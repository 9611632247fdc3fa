package compiled

// compileTexts reads a model and a policy text as the service reads its
// files and compiles them: the checks of this package (CheckModel,
// ParsePolicy, CheckPatterns), then Compile. The service's own vocabulary
// check (package authz) is not applied: what is compiled here is any
// policy casbin loads.
func compileTexts(modelText, policyText string) (*Policy, []Problem) {
	const modelPath, policyPath = "model.conf", "policy.csv"
	m, problems := CheckModel(modelPath, modelText)
	if m == nil {
		return nil, problems
	}
	rules, more := ParsePolicy(policyPath, []byte(policyText), m)
	problems = append(problems, more...)
	problems = append(problems, CheckPatterns(policyPath, m, rules)...)
	if HasErrors(problems) {
		return nil, problems
	}
	p, err := Compile(policyPath, m, rules)
	if err != nil {
		return nil, append(problems, Problem{File: policyPath, Msg: err.Error()})
	}
	if broken := FirstQuestion(modelPath, modelText, p); len(broken) > 0 {
		return nil, append(problems, broken...)
	}
	return p, problems
}
