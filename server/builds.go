package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/proxy"
)

// BuildHandlers serves the build-result routes (package proxy): one
// handler per path, built from the path's route entries, and the artifact
// downloads.
type BuildHandlers interface {
	Serve(routes ...proxy.Route) echo.HandlerFunc
	Artifact(echo.Context) error
}

// noUpstream serves the build routes on an instance without
// FACADE_UPSTREAM_URL: every one answers 503.
type noUpstream struct{}

func (noUpstream) Serve(...proxy.Route) echo.HandlerFunc { return noUpstream{}.Artifact }
func (noUpstream) Artifact(echo.Context) error           { return errNoUpstream }

var errNoUpstream = facade.ErrBuildsNotConfigured
