"""The container image, on paper (it is not built here: no registry for the base image): the
``Dockerfile`` passes hadolint where its wheel installs, and by its structure pins the base image by
digest, runs as a user that is not root, has ``conformance`` as its entry point and a health check
for ``serve``; every Kubernetes and CI template names the image of this release; the health
check answers as it says."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conformance.healthcheck import DEFAULT_PORT, healthy, served_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
IMAGE = f"registry.example/psd2-conformance:{VERSION}"
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments left out)."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in (raw.strip() for raw in joined.splitlines())
        if line and not line.startswith("#")
    ]


def _hadolint() -> str | None:
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.is_file() else shutil.which("hadolint")


def test_hadolint_finds_nothing() -> None:
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip("hadolint did not install here: the structural tests below stand for it")
    done = subprocess.run(
        [hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_base_image_is_pinned_by_digest() -> None:
    instructions = _instructions()
    arguments = dict(
        value.split("=", 1) for kind, value in instructions if kind == "ARG" and "=" in value
    )
    bases = [value.split()[0] for kind, value in instructions if kind == "FROM"]
    assert len(bases) >= 2  # the wheel is built in a stage of its own
    for base in bases:
        name = arguments.get(base.strip("${}"), base)
        assert _DIGEST.search(name), f"{base} is not pinned by its digest"


def test_the_image_runs_as_a_user_that_is_not_root() -> None:
    users = [value for kind, value in _instructions() if kind == "USER"]
    assert users, "no USER: the image would run as root"
    user = users[-1].split(":")[0]
    assert user.isdigit() and int(user) >= 1000, user


def test_the_entry_point_and_the_health_check() -> None:
    instructions = dict(_instructions())
    assert instructions["ENTRYPOINT"] == '["conformance"]'
    check = instructions["HEALTHCHECK"]
    assert '"-m", "conformance.healthcheck"' in check and "--interval=" in check
    assert "EXPOSE" in instructions and str(DEFAULT_PORT) in instructions["EXPOSE"]


def _templates() -> list[Path]:
    """The CI files, and the Kubernetes manifests that run a container (not the volume claim)."""
    ci = ROOT / "docs" / "ci"
    manifests = [p for p in ci.rglob("*.yaml") if "containers:" in p.read_text(encoding="utf-8")]
    return sorted([*ci.rglob("*.yml"), *manifests])


@pytest.mark.parametrize("path", _templates(), ids=lambda path: path.name)
def test_every_template_names_this_release_s_image(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert IMAGE in text, f"{path.relative_to(ROOT)} does not name {IMAGE}"
    assert "psd2-conformance:latest" not in text


def test_the_kubernetes_pods_run_as_the_image_s_user() -> None:
    user = [value for kind, value in _instructions() if kind == "USER"][-1].split(":")[0]
    for path in sorted((ROOT / "docs" / "ci" / "fleet" / "kubernetes").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        pods = text.count("containers:")
        assert text.count("runAsNonRoot: true") == pods, path.name
        assert text.count(f"runAsUser: {user}") == pods, path.name


def test_the_docs_say_it_is_not_built_here_and_the_wheel_installs() -> None:
    guide = (ROOT / "docs" / "guides" / "container.md").read_text(encoding="utf-8")
    assert "not built on the project's development machine" in guide
    assert "The wheel stays the way\nto install the suite" in guide


def test_the_health_check_reads_the_served_port() -> None:
    assert served_port(["conformance", "run", "--profile", "bank.toml"]) is None
    assert served_port(["conformance", "serve", "--host", "0.0.0.0"]) == DEFAULT_PORT
    assert served_port(["/usr/local/bin/conformance", "serve", "--port", "8443"]) == 8443
    assert served_port(["conformance", "serve", "--port=9000"]) == 9000


def test_the_health_check_holds_serve_to_its_port() -> None:
    assert healthy(["conformance", "run"])  # any other command: healthy while it runs
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert healthy(["conformance", "serve", "--port", str(port)])
    assert not healthy(["conformance", "serve", "--port", str(port)])  # closed now
