"""Values at a path of a JSON document (``transactions/booked/*/amount``), and that path as a
report shows it (``transactions.booked[0].amount``): what the checks read in an answer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["dotted_path", "values_at", "walk_values"]


def values_at(document: Any, pointer: str) -> list[Any]:
    """Every value found at ``pointer`` (``a/*/b``: ``*`` walks arrays and objects), in order;
    empty when the document has none there (a check that finds none has judged nothing)."""
    return [value for _, value in walk_values(document, pointer.split("/"), ())]


def dotted_path(path: str) -> str:
    """``transactions/booked/0/remittance`` → ``transactions.booked[0].remittance``."""
    text = ""
    for part in path.split("/"):
        text += f"[{part}]" if part.isdigit() else (f".{part}" if text else part)
    return text


def walk_values(node: Any, parts: list[str], path: tuple[str, ...]) -> Iterable[tuple[str, Any]]:
    """Each ``(path, value)`` that ``parts`` (a pointer's steps, ``*`` for every item) reach."""
    if not parts:
        yield "/".join(path) or "/", node
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        if isinstance(node, list):
            for index, item in enumerate(node):
                yield from walk_values(item, rest, (*path, str(index)))
        elif isinstance(node, Mapping):
            for key, item in node.items():
                yield from walk_values(item, rest, (*path, str(key)))
    elif isinstance(node, Mapping) and head in node:
        yield from walk_values(node[head], rest, (*path, head))
