package server

import "github.com/labstack/echo/v4"

// RoutesOf lists the routes s answers on the API listener, for the test
// that holds the OpenAPI description to the route table.
func RoutesOf(s *Server) []*echo.Route { return s.api.Routes() }

// StatementQuery is statementQuery, for its fuzz target.
var StatementQuery = statementQuery
