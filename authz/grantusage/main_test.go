package grantusage_test

import (
	"log/slog"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// discard is the Authorizers' logger: the tests read Redis, not the log.
var discard = slog.New(slog.DiscardHandler)
