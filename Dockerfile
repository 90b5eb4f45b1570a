# syntax=docker/dockerfile:1
#
# tuitbot's MCP server over Streamable HTTP, as a static binary on a distroless
# non-root base. Build:   docker build -t tuitbot --build-arg VERSION=$(git describe --tags --always) .
# Run (see README, "Container"):
#   docker run -d --name tuitbot -p 127.0.0.1:8765:8765 --user "$(id -u):$(id -g)" \
#     -v "$HOME/.tuitbot:/data" tuitbot
# Untested in CI: the build needs the base images from a registry (see README).

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w \
        -X github.com/tuitbot/tuitbot/internal/version.version=${VERSION} \
        -X github.com/tuitbot/tuitbot/internal/version.commit=${COMMIT} \
        -X github.com/tuitbot/tuitbot/internal/version.date=${DATE}" \
      -o /out/tuitbot ./cmd/tuitbot

# static-debian12 carries CA certificates (X and LLM APIs are HTTPS), tzdata
# and a nonroot user (65532), and nothing else: no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL io.modelcontextprotocol.server.name="io.github.tuitbot/tuitbot" \
      org.opencontainers.image.title="tuitbot" \
      org.opencontainers.image.description="MCP server that lets AI agents work an X account safely through one policy gateway" \
      org.opencontainers.image.source="https://github.com/tuitbot/tuitbot" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/tuitbot /usr/local/bin/tuitbot
# Everything tuitbot keeps (config, database, tokens, the HTTP bearer token)
# lives in the home; mount it to keep it.
ENV TUITBOT_HOME=/data
VOLUME ["/data"]
USER nonroot:nonroot
EXPOSE 8765
# Inside the container the server must listen on all interfaces for the port
# mapping to reach it; publish it on the host's loopback only (-p 127.0.0.1:8765:8765).
# The bearer token and the Origin check still apply.
ENTRYPOINT ["/usr/local/bin/tuitbot"]
CMD ["mcp", "serve", "--transport", "http", "--listen", "0.0.0.0:8765"]
# GET /healthz answers "ok"; the binary probes it itself (no curl here).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/tuitbot", "mcp", "healthcheck", "--url", "http://127.0.0.1:8765/healthz"]
