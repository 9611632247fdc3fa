package testredis

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// AfterCommand adds a hook to c that calls then, in the caller's
// goroutine, each time a command named name (lower case, as go-redis
// names it: "get", "smembers") on a key starting with keyPrefix has
// answered, before its caller sees the answer. Tests use it to hold a
// request between its read and its write, or to change the data there.
func AfterCommand(c *redis.Client, name, keyPrefix string, then func(ctx context.Context)) {
	c.AddHook(afterCommand{name: name, keyPrefix: keyPrefix, then: then})
}

type afterCommand struct {
	name, keyPrefix string
	then            func(ctx context.Context)
}

func (h afterCommand) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h afterCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h afterCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if args := cmd.Args(); cmd.Name() == h.name && len(args) > 1 && strings.HasPrefix(fmt.Sprint(args[1]), h.keyPrefix) {
			h.then(ctx)
		}
		return err
	}
}
