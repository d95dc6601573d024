"""The draft profile: the base profile's keys (``--profile``), and every key discovery decided,
each with a comment naming the exchanges that decided it; a key it could not decide is written
commented out, with the default the suite takes and why (:func:`write_draft`).

Where the base profile already says a key, its value stays (the reader knows the bank), and the
comment says whether the bank's answers agree; ``--check`` lists the keys where they do not.
A key whose decided value is the suite's own default (the contract's path, its header set, no
template) is a comment only, so that the draft says only what differs. The set-up templates go
into a folder beside the draft (``<name>_setup/``), one JSON object per creation."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.discover.keys import matches
from conformance.discover.toml_text import toml_key, toml_value

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.evidence import Decision, Key
    from conformance.discover.session import Discovery
    from conformance.profile import TargetProfile

__all__ = ["absolute_paths", "profile_text", "shown", "write_draft"]

#: Keys whose value is a file or folder relative to the profile's own folder.
_PATH_KEYS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("certificate",), ("key",), ("ca_certificate",), ("tls_certificate",), ("tls_key",),
        ("second_certificate",), ("second_key",), ("setup", "templates"), ("hooks", "batch"),
        ("sca", "command"),
    }
)  # fmt: skip
_COMMENT_ONLY = "comment"


class _Draft:
    """The profile's data (nested dicts) and the comments above its keys."""

    def __init__(self, base: Mapping[str, Any]) -> None:
        self.data: dict[str, Any] = copy.deepcopy(dict(base))
        self.comments: dict[Key, list[str]] = {}
        #: Per table, lines written after its keys (undecided keys, defaults decided).
        self.notes: dict[Key, list[str]] = {}

    def get(self, key: Key) -> Any:
        node: Any = self.data
        for part in key:
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def set(self, key: Key, value: Any, comment: list[str]) -> None:
        node = self.data
        for part in key[:-1]:
            node = node.setdefault(part, {})
        node[key[-1]] = value
        self.comments[key] = comment

    def note(self, table: Key, lines: list[str]) -> None:
        node = self.data
        for part in table:
            node = node.setdefault(part, {})
        self.notes.setdefault(table, []).extend(lines)


def _evidence(decision: Decision) -> list[str]:
    return [f"  {line}" for line in decision.evidence]


def _written_key(decision: Decision, contract: Contract) -> tuple[Key, Any]:
    """Where a decision goes in the profile and the value written; ``_COMMENT_ONLY`` for a
    decided value that is the suite's own default."""
    key, value = decision.key, decision.value
    ops = contract.operations
    if key[0] == "paths" and key[-1] == "periodic":
        return key, _COMMENT_ONLY if value == ops[key[1]].path else value
    if key == ("paths", "CC"):
        return key, _COMMENT_ONLY if value == ops["CC"].path else value
    if key[0] == "required_headers":
        same = {h.lower() for h in value} == {h.lower() for h in ops[key[1]].required_headers}
        return key, _COMMENT_ONLY if same else list(value)
    if key == ("operations", "unsupported"):
        return key, list(value) if value else _COMMENT_ONLY
    if key == ("setup", "templates"):
        return key, value if value else _COMMENT_ONLY
    if key[0] == "query":
        return key, _COMMENT_ONLY if value == key[-1] else value
    return key, value


def _base_says(draft: _Draft, key: Key) -> bool:
    if key == ("operations", "unsupported"):
        return draft.get(("operations", "supported")) is not None or draft.get(key) is not None
    if key[0] == "headers":
        headers = draft.get(("headers",)) or {}
        return any(name.lower() == key[1].lower() for name in headers)
    if key[0] == "paths":
        entry = draft.get(key[:2])
        if key[-1] == "periodic":
            return isinstance(entry, Mapping) and "periodic" in entry
        return isinstance(entry, str) or (isinstance(entry, Mapping) and "path" in entry)
    return draft.get(key) is not None


def _place(
    draft: _Draft, decision: Decision, base: TargetProfile | None, contract: Contract
) -> None:
    key, value = _written_key(decision, contract)
    if not decision.is_decided and key == ("base_url",):  # required: the URL as given
        why = f"undecided: {decision.why}; written as given"
        draft.set(key, decision.default, [why, *_evidence(decision)])
        return
    if not decision.is_decided and _base_says(draft, key):
        return  # the base profile's value stands
    if not decision.is_decided:
        default = "" if decision.default is None else f" (the default: {shown(decision.default)})"
        lines = [f"undecided {decision.name}{default}: {decision.why}", *_evidence(decision)]
        if decision.default is not None:
            lines.append(_assignment(key, decision.default))
        draft.note(_table_of(key), lines)
        return
    if key != ("base_url",) and base is not None and _base_says(draft, key):
        agree = matches(decision, base, contract)
        said = "the bank's answers agree" if agree else (
            f"the bank answered {shown(decision.value)}; kept from --profile (--check lists it)"
        )  # fmt: skip
        draft.comments[_comment_key(key)] = [said, *_evidence(decision)]
        return
    if value == _COMMENT_ONLY:
        said = f"{decision.name}: the suite's default, decided by"
        draft.note(_table_of(key), [said, *_evidence(decision)])
        return
    if key == ("setup", "templates"):
        value = "templates"  # the folder; write_draft names it after the draft
    if key[0] == "paths" and key[-1] == "periodic":
        draft.set(key, value, ["decided by", *_evidence(decision)])
        return
    draft.set(key, _plain(value), ["decided by", *_evidence(decision)])


def _table_of(key: Key) -> Key:
    """The table a key's note goes in (``[paths]`` for a periodic path: it is written inline)."""
    return key[:1] if key[0] == "paths" else key[:-1]


def _assignment(key: Key, value: Any) -> str:
    """The line that would set ``key`` in its table (:func:`_table_of`)."""
    if key[0] == "paths" and key[-1] == "periodic":
        return f"{toml_key(key[1])} = {toml_value({'periodic': value})}"
    return f"{toml_key(key[-1])} = {toml_value(_plain(value))}"


def _comment_key(key: Key) -> Key:
    return key[:2] if key[0] == "paths" else key


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def shown(value: Any) -> str:
    """A value as the profile writes it (TOML; a template's fields as JSON)."""
    return toml_value(_plain(value)) if not isinstance(value, dict) else json.dumps(value)


def absolute_paths(data: dict[str, Any], base_dir: Path) -> None:
    """Make the file and folder keys of a profile's data absolute against ``base_dir`` (its own
    folder), so that the data can be written into another folder."""
    for key in _PATH_KEYS:
        node: Any = data
        for part in key[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or not isinstance(node.get(key[-1]), str):
            continue
        value = node[key[-1]]
        if key in {("hooks", "batch"), ("sca", "command")} and "/" not in value:
            continue  # a program on the PATH
        if not Path(value).is_absolute():
            node[key[-1]] = str((base_dir / value).resolve())
    negative = data.get("negative_certificates")
    if isinstance(negative, dict):
        for name, value in negative.items():
            if isinstance(value, str) and name != "password_env" and not Path(value).is_absolute():
                negative[name] = str((base_dir / value).resolve())


def profile_text(data: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """A profile's data as TOML, with ``header`` as its opening comment."""
    return _render(_Draft(data), header)


def _render(draft: _Draft, header: Sequence[str]) -> str:
    lines = [f"# {line}".rstrip() for line in header]
    lines.append("")
    _render_table(draft, (), draft.data, lines)
    return "\n".join(lines).rstrip() + "\n"


def _is_table(value: Any, inline: bool) -> bool:
    return isinstance(value, Mapping) and not inline


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _render_table(draft: _Draft, at: Key, table: Mapping[str, Any], lines: list[str]) -> None:
    """A table's own keys (each after its comments), its notes, then its sub-tables and arrays
    of tables; ``[paths]`` entries that are tables are written inline."""
    inline = at == ("paths",)
    for name, value in table.items():
        if not (_is_table(value, inline) or _is_table_array(value)):
            _render_key(draft, (*at, name), value, lines)
    lines.extend(f"# {note}" for note in draft.notes.get(at, ()))
    for name, value in table.items():
        if _is_table(value, inline):
            lines.extend(("", f"[{'.'.join(toml_key(part) for part in (*at, name))}]"))
            _render_table(draft, (*at, name), value, lines)
    for name, value in table.items():  # arrays of tables last: [[waivers]]
        header = ".".join(toml_key(part) for part in (*at, name))
        if _is_table_array(value):
            for item in value:
                lines.extend(("", f"[[{header}]]"))
                _render_table(draft, (*at, name), item, lines)


def _render_key(draft: _Draft, key: Key, value: Any, lines: list[str]) -> None:
    comments = list(draft.comments.get(key, ()))
    if isinstance(value, Mapping):  # an inline table: the comments of its keys too
        for sub in value:
            comments.extend(draft.comments.get((*key, sub), ()))
    lines.extend(f"# {comment}" for comment in comments)
    lines.append(f"{toml_key(key[-1])} = {toml_value(value)}")


def write_draft(
    found: Discovery,
    out: Path,
    contract: Contract,
    *,
    base: TargetProfile | None = None,
    base_data: Mapping[str, Any] | None = None,
) -> Path | None:
    """Write the draft to ``out`` (and its templates folder, when a creation needs one); the
    folder written, or None."""
    out.parent.mkdir(parents=True, exist_ok=True)
    draft = _Draft(base_data or {})
    if base is not None and base.source is not None:
        absolute_paths(draft.data, Path(base.source).parent)
    draft.data.setdefault("name", f"{out.stem} (drafted by conformance discover)")
    for decision in found.decisions:
        _place(draft, decision, base, contract)
    templates_dir: Path | None = None
    decided_templates = found.decision(("setup", "templates"))
    if draft.get(("setup", "templates")) == "templates" and decided_templates is not None:
        templates_dir = out.parent / f"{out.stem}_setup"
        templates_dir.mkdir(parents=True, exist_ok=True)
        for op_id, fields in decided_templates.value.items():
            text = json.dumps(fields, indent=2, ensure_ascii=False) + "\n"
            (templates_dir / f"{op_id}.json").write_text(text, encoding="utf-8")
        draft.data["setup"]["templates"] = templates_dir.name
    header = [
        f"Drafted by `conformance discover` from what {found.target} answered.",
        "Every key discovery decided carries the exchanges that decided it (request line,",
        "status, the decisive part of the answer); a key it could not decide is commented out,",
        "with the default the suite takes and why. Keys without a comment come from --profile.",
        "Check it again later: conformance discover --check " + out.name,
    ]
    if found.stopped:
        header.append(f"DISCOVERY STOPPED: {found.stopped}")
    header.extend(
        f"FINDING (a break of a stated rule, not written as the bank's choice): {line}"
        for line in found.findings
    )
    header.append(found.cleanup_line())
    header.extend(f"kept: {note}" for note in found.notes)
    out.write_text(_render(draft, header), encoding="utf-8")
    return templates_dir
