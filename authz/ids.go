package authz

// Object prefixes of the questions the service asks (docs/policy.md).
// Request objects are always built by this package from identifiers the
// caller parsed (facade.AccountID, ...), whose format admits no prefix,
// separator or wildcard, so a caller can never smuggle one into a question.
const (
	prefixClass   = "class:"
	prefixAccount = "account:"
	prefixProject = "project:"
	prefixPlan    = "plan:"
	prefixStudent = "student:"
)

// Actions the service asks about.
const (
	actView        = "view"
	actUpdate      = "update"
	actViewAccount = "view_account"
	actTransfer    = "transfer"
	actReceive     = "receive" // may pay into the account, never take from it
)

// actionsFor lists, per object prefix, the actions the service asks about it.
var actionsFor = map[string][]string{
	prefixClass:   {actView, actUpdate},
	prefixStudent: {actView, actUpdate},
	prefixAccount: {actViewAccount, actTransfer, actReceive},
	prefixProject: {actView},
	prefixPlan:    {actView},
}
