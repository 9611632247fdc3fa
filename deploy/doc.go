// Package deploy holds the Kubernetes manifests (kubernetes/) and the
// test that decodes them strictly into the Kubernetes API's own Go types.
// It is a module of its own so that k8s.io/api and its dependencies stay
// out of the service's module: only this test needs them.
package deploy
