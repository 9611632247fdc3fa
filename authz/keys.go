package authz

// Redis keys and channels owned by this package.
const (
	// reloadChannel carries "the policy files changed, reload yours" between
	// instances (Pub/Sub; the payload is informative only).
	reloadChannel = "facade:authz:reload"
)
