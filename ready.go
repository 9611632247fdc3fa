package facade

import "time"

// ReadyRedisWait is the longest /readyz waits for Redis to answer a PING
// (and so, with nothing else to wait for, about the longest it takes):
// Redis's state is shown in its body, never a reason to answer 503
// (docs/operations.md, "Readiness"). The readiness probe of
// deploy/kubernetes allows more than this (its test checks).
const ReadyRedisWait = 250 * time.Millisecond
