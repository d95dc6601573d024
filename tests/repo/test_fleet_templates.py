"""The scale-out templates of ``docs/ci/fleet/``: the GitHub Actions and GitLab CI files against
the schemas check-jsonschema vendors (SchemaStore's, offline), the Kubernetes manifests
structurally (apiVersion and kind, the fields a Job, CronJob and claim require, the pod index
used, every mount backed by a volume, every claim declared): no Kubernetes schema is vendored,
so they are not schema-validated here. Every ``conformance fleet`` command they run is read by
the real command line parser."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("check_jsonschema", reason="check-jsonschema (a dev dependency) validates")
from ruamel.yaml import YAML  # check-jsonschema's YAML parser

from conformance.cli import build_parser

FLEET = Path(__file__).resolve().parents[2] / "docs" / "ci" / "fleet"
KUBERNETES = sorted((FLEET / "kubernetes").glob("*.yaml"))
_KINDS = {"Job": "batch/v1", "CronJob": "batch/v1", "PersistentVolumeClaim": "v1"}


@pytest.mark.parametrize(
    ("file", "schema"),
    [("github-actions.yml", "vendor.github-workflows"), ("gitlab-ci.yml", "vendor.gitlab-ci")],
)
def test_the_ci_files_meet_their_published_schemas(file: str, schema: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(FLEET / file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _documents(path: Path) -> list[Mapping[str, Any]]:
    return [document for document in YAML(typ="safe").load_all(path) if document]


def _pod_specs(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    if document["kind"] == "Job":
        yield document["spec"]["template"]["spec"]
    elif document["kind"] == "CronJob":
        yield document["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def _check_pod(pod: Mapping[str, Any], claims: set[str]) -> None:
    assert pod["restartPolicy"] in ("Never", "OnFailure")  # a Job's pods
    volumes = {volume["name"]: volume for volume in pod.get("volumes", ())}
    for container in pod["containers"]:
        assert container["name"] and container["image"]
        for mount in container.get("volumeMounts", ()):
            assert mount["name"] in volumes and mount["mountPath"].startswith("/")
    for volume in volumes.values():
        if "persistentVolumeClaim" in volume:
            assert volume["persistentVolumeClaim"]["claimName"] in claims


def _check_job_spec(spec: Mapping[str, Any]) -> None:
    if spec.get("completionMode") == "Indexed":
        assert spec["completions"] >= 1 and spec["parallelism"] >= 1
        text = " ".join(map(str, spec["template"]["spec"]["containers"][0]["args"]))
        assert "--index" in text and "$JOB_COMPLETION_INDEX" in text


@pytest.mark.parametrize("path", KUBERNETES, ids=lambda path: path.name)
def test_the_kubernetes_manifests_are_well_formed(path: Path) -> None:
    claims = {
        document["metadata"]["name"]
        for manifest in KUBERNETES
        for document in _documents(manifest)
        if document["kind"] == "PersistentVolumeClaim"
    }
    for document in _documents(path):
        assert document["apiVersion"] == _KINDS[document["kind"]]
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", document["metadata"]["name"])
        if document["kind"] == "CronJob":
            assert len(document["spec"]["schedule"].split()) == 5
            _check_job_spec(document["spec"]["jobTemplate"]["spec"])
        elif document["kind"] == "Job":
            _check_job_spec(document["spec"])
        else:
            assert document["spec"]["accessModes"] and document["spec"]["resources"]["requests"]
        for pod in _pod_specs(document):
            _check_pod(pod, claims)


def test_the_templates_hold_an_indexed_job_a_cronjob_and_a_merge_job() -> None:
    documents = [document for path in KUBERNETES for document in _documents(path)]
    kinds = [(d["kind"], d["spec"].get("completionMode")) for d in documents]
    assert ("Job", "Indexed") in kinds and ("CronJob", None) in kinds
    commands = [" ".join(c["command"]) for d in documents for pod in _pod_specs(d)
                for c in pod["containers"] if "command" in c]  # fmt: skip
    assert any(command.startswith("conformance fleet report") for command in commands)


def _strings(value: Any) -> Iterator[str]:
    """Every string of a parsed YAML document; a list that starts with ``conformance`` (a
    container's command) as one line."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        if value and value[0] == "conformance":
            yield shlex.join(map(str, value))
        else:
            for item in value:
                yield from _strings(item)


def _fleet_commands() -> Iterator[str]:
    """Every ``conformance fleet`` command line of the templates, its variables filled in."""
    for path in [FLEET / "github-actions.yml", FLEET / "gitlab-ci.yml", *KUBERNETES]:
        for document in _documents(path):
            for text in _strings(document):
                for found in re.finditer(r"conformance fleet (?:run|report)[^|;\n]*", text):
                    yield re.sub(r"\$\{\{[^}]*\}\}|\$[A-Z_]+", "0", found.group(0))


def test_every_fleet_command_of_the_templates_parses() -> None:
    commands = list(_fleet_commands())
    assert len(commands) >= 5, commands
    for command in commands:
        words = shlex.split(command)[1:]
        build_parser(words).parse_args(words)  # argparse exits on a mistake
