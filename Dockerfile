# syntax=docker/dockerfile:1
# The production image (docs/operations.md, "Containers and Kubernetes"): the binary
# without the demo, static (CGO_ENABLED=0), built with -trimpath and stamped
# with its version and commit, alone on an empty base with the CA
# certificates, the default policy and a /tmp; it runs as a numeric
# non-root user and writes nothing outside /tmp. Build it with
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t facade:VERSION .
# The demo target (--target demo) is the demo build, for compose.yaml's
# demo upstream. Every base is pinned to an exact version, never latest.
# cmd/facade/docker_test.go runs the build commands below as plain
# commands and checks what they make.

ARG GO_IMAGE=golang:1.26.8-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.stampedVersion=${VERSION} -X main.stampedCommit=${COMMIT}" -o /out/facade ./cmd/facade
RUN mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM build AS build-demo
ARG VERSION=devel
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -tags demo -trimpath -ldflags "-s -w -X main.stampedVersion=${VERSION} -X main.stampedCommit=${COMMIT}" -o /out/facade-demo ./cmd/facade

FROM scratch AS demo
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tmp /tmp
COPY --from=build-demo /out/facade-demo /usr/local/bin/facade
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/facade"]
CMD ["demo-upstream"]

FROM scratch AS production
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tmp /tmp
COPY model.conf policy.csv /etc/facade/
COPY --from=build /out/facade /usr/local/bin/facade
ENV FACADE_ADDR=:8080 FACADE_OPS_ADDR=:9090 \
    FACADE_MODEL=/etc/facade/model.conf FACADE_POLICY=/etc/facade/policy.csv
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/facade"]
CMD ["serve"]
