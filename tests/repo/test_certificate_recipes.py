"""The certificate recipes of ``docs/guides/certificates.md`` (issue 44 item 7): every file a
command reads was written by an earlier command of the guide (one folder, not ``ids/`` then
``certs/``), and every folder a command writes keys to is git-ignored."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "certificates.md"
_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
_WRITES = re.compile(r"certs .*?--out (\S+)")
_READS = re.compile(r"--(?:ca-cert|ca-key|revoke|trust|cert|key) (\S+)")


def _commands() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    lines = [line for block in _BLOCK.findall(text) for line in block.splitlines()]
    joined = "\n".join(lines).replace("\\\n", " ")
    return [line.split("#", 1)[0] for line in joined.splitlines() if "conformance " in line]


def test_each_file_a_recipe_reads_was_written_before_by_the_guide() -> None:
    written: list[str] = []
    read_somewhere = False
    for command in _commands():
        for path in _READS.findall(command):
            if "/" not in path:  # the reader's own files (against a bank; --lint my-qseal.pem)
                continue
            read_somewhere = True
            assert any(path.startswith(folder + "/") for folder in written), (path, written)
        written += [folder.rstrip("/") for folder in _WRITES.findall(command)]
    assert written and read_somewhere


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_each_folder_a_recipe_writes_keys_to_is_git_ignored() -> None:
    folders = {folder for command in _commands() for folder in _WRITES.findall(command)}
    assert folders
    for folder in sorted(folders):
        done = subprocess.run(
            ["git", "-C", str(ROOT), "check-ignore", "-q", f"{folder}/tpp.key"], check=False
        )
        assert done.returncode == 0, f"{folder}/tpp.key is not git-ignored"
