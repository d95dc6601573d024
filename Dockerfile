# The suite's container image: `conformance` as its entry point, run as a user without root,
# on a base image pinned by its digest. docs/guides/container.md says how to build and use it.
# It is not built on the project's development machine (no registry there to pull the base
# image from): tests/test_container.py checks this file with hadolint and by its structure, and
# the wheel (`pip install psd2-conformance`) stays the way to install the suite.
#
#   docker build -t registry.example/psd2-conformance:1.0.0 .
#   docker run --rm -v "$PWD/reports:/reports" registry.example/psd2-conformance:1.0.0 \
#       run --profile /reports/bank.toml --reports /reports
#   docker run -d -p 8000:8000 registry.example/psd2-conformance:1.0.0 \
#       serve --host 0.0.0.0 --port 8000

# python:3.11-slim (Debian bookworm), by the digest of its multi-platform index; a release
# moves it forward on purpose, never by a tag that changes under it.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# The wheel, built from the checkout as `make release-check` builds it.
FROM ${PYTHON_IMAGE} AS wheel
WORKDIR /src
COPY . .
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# The suite, installed from that wheel alone (no compiler, no checkout in the image).
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=wheel /wheels /wheels
RUN python -m pip install --no-cache-dir /wheels/*.whl \
    && rm -rf /wheels \
    && useradd --uid 10001 --user-group --create-home --home-dir /home/conformance conformance \
    && mkdir /reports \
    && chown 10001:10001 /reports
USER 10001:10001
WORKDIR /reports
VOLUME ["/reports"]
EXPOSE 8000
# `conformance serve`: its port accepts a connection; any other command is healthy while it runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-m", "conformance.healthcheck"]
ENTRYPOINT ["conformance"]
CMD ["--help"]
