package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// noUpstream serves the build routes on an instance without
// FACADE_UPSTREAM_URL: every one answers 503.
type noUpstream struct{}

func (noUpstream) Projects(echo.Context) error { return errNoUpstream }
func (noUpstream) Results(echo.Context) error  { return errNoUpstream }
func (noUpstream) Artifact(echo.Context) error { return errNoUpstream }

var errNoUpstream = facade.Errorf(facade.EUNAVAILABLE, facade.DetailBuildsNotConfigured)
