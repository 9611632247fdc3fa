package authz

// canonicalModel is the model this package implements, without the comments
// of the shipped model.conf; checkModel compares the file against it.
const canonicalModel = `
[request_definition]
r = ` + wantRequest + `

[policy_definition]
p = ` + wantPolicy + `

[role_definition]
g = ` + wantGrouping + `
g2 = ` + wantGrouping + `

[policy_effect]
e = ` + wantEffect + `

[matchers]
m = ` + wantMatcher + `
`
