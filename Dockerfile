# Builds the operator image that `make docker-build` tags IMG and dist/install.yaml runs.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
# The version stamped into the binary; `make docker-build` passes `git describe`.
ARG VERSION=v0.0.0-dev
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY main.go ./
COPY api/ api/
COPY config/crd/ config/crd/
COPY internal/ internal/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-X github.com/seed0f91f25e/multicache/internal/version.Version=${VERSION}" -o manager .

FROM gcr.io/distroless/static:nonroot
ARG VERSION=v0.0.0-dev
LABEL org.opencontainers.image.title="multicache" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /workspace/manager .
COPY LICENSE /licenses/LICENSE
USER 65532:65532
ENTRYPOINT ["/manager"]
