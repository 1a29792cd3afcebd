# The service-ci container image (ghcr.io/service-ci/ci:v1): `service-ci --agent <id>` on a
# glibc base with a shell, as a non-root user; with no command it runs `service-ci` alone.
#
# Multi-arch without emulation: the build stage runs on the build machine's platform and
# cross-compiles for the image's platform (TARGETARCH); the final stage only copies files.
#
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=1.2.0 .

FROM --platform=$BUILDPLATFORM denoland/deno:debian-2.9.6 AS build
ARG TARGETARCH
# ca-certificates for the final stage's system store (read with DENO_TLS_CA_STORE=system).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY deno.json deno.lock* ./
COPY src/ src/
COPY scripts/build.ts scripts/sbom.ts scripts/default_base_url.ts scripts/permissions.ts scripts/
# The release workflow passes the address a release bakes in as the service's default.
ARG SERVICE_DEFAULT_BASE_URL=""
# The same build as a release's (scripts/build.ts), for the one Linux target of this platform.
RUN case "$TARGETARCH" in \
      amd64) target=x86_64-unknown-linux-gnu ;; \
      arm64) target=aarch64-unknown-linux-gnu ;; \
      *) echo "unsupported TARGETARCH: $TARGETARCH (expected amd64 or arm64)" >&2; exit 1 ;; \
    esac \
 && deno run --allow-read --allow-write --allow-run scripts/build.ts --target "$target" \
      --default-base-url "$SERVICE_DEFAULT_BASE_URL"

FROM debian:bookworm-slim
ARG VERSION=dev
LABEL org.opencontainers.image.title="service-ci" \
      org.opencontainers.image.description="Triggers an AI-evaluation run and turns the agent's quality gate into a CI exit code" \
      org.opencontainers.image.source="https://github.com/service-ci/service-ci" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# The build stage built exactly one target, so this pattern matches exactly one binary.
COPY --from=build /app/dist/*-unknown-linux-gnu/service-ci /usr/local/bin/service-ci
USER 10001:10001
# No ENTRYPOINT: a step's command is `service-ci --agent <id> …`. Run with no command (a
# container step copied without its command, as Cloud Build and Tekton allow), the image runs
# service-ci with no arguments: without an agent that is the one-line usage error, exit 2, so
# such a step fails instead of passing with no gate.
CMD ["service-ci"]
