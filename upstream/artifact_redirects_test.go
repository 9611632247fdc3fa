package upstream_test

import (
	"context"
	"io"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/upstream"
)

// An artifact download follows a redirect only when the caller's check
// approves the hop, and asks again at every hop of a chain.
func TestArtifactRedirectsAreCheckedAtEveryHop(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	const (
		first  = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
		second = "/browse/PROJ-CORE-5/artifact/shared/core-service.jar/"
		third  = "/browse/PROJ-CORE-4/artifact/shared/core-service.jar/"
	)
	bamboo.Redirect(first, second)
	bamboo.Redirect(second, third)

	// Without a check, no redirect is followed.
	_, err := client.Artifact(context.Background(), first)
	wantError(t, err, facade.ErrUpstreamBad)

	var asked []string
	approve := func(stopAt string) upstream.RedirectCheck {
		return func(path string) bool { asked = append(asked, path); return path != stopAt }
	}
	ctx := upstream.WithRedirectCheck(context.Background(), approve(""))
	stream, err := client.Artifact(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stream.Body)
	stream.Body.Close()
	if !stream.Redirected || stream.Path != third || len(asked) != 2 || asked[0] != second || asked[1] != third {
		t.Fatalf("followed to %s (redirected %v), asked %v", stream.Path, stream.Redirected, asked)
	}

	// Refusing the second hop stops the chain there.
	asked = nil
	_, err = client.Artifact(upstream.WithRedirectCheck(context.Background(), approve(third)), first)
	wantError(t, err, facade.ErrUpstreamBad)
	if len(asked) != 2 {
		t.Fatalf("asked %v", asked)
	}

	// A hop off the artifact paths never reaches the check.
	asked = nil
	bamboo.Redirect(first, "/rest/api/latest/project.json")
	_, err = client.Artifact(upstream.WithRedirectCheck(context.Background(), approve("")), first)
	wantError(t, err, facade.ErrUpstreamBad)
	if len(asked) != 0 {
		t.Fatalf("a non-artifact hop was offered to the check: %v", asked)
	}
}
