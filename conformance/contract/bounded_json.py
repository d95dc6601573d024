"""The one JSON reader for what arrives from outside: a body, a HAR file, an exchange log line.

``json.loads`` reads a document nested 100,000 deep by recursion and ends in a
``RecursionError``; one nested a few hundred deep parses, and then breaks whatever walks it
recursively afterwards (the schema validator, masking, rendering). :func:`loads` refuses a
document nested deeper than :data:`MAX_DEPTH` or longer than :data:`MAX_BYTES` before it is
parsed, with :class:`JsonTooLarge`, a :class:`json.JSONDecodeError`: every caller that already
answers "not valid JSON" (the judge's finding, the reference server's 400 FORMAT_ERROR, a
discover probe that decides nothing, the preflight's "not the interface") answers it the same
way, and none crashes. The interface's own documents are a few levels deep.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["MAX_BYTES", "MAX_DEPTH", "JsonTooLarge", "loads"]

#: Deepest nesting of arrays and objects read (the interface's bodies and a HAR file use < 10).
MAX_DEPTH: Final = 64
#: Longest document read, in bytes (or characters, for text).
MAX_BYTES: Final = 128 * 1024 * 1024

#: A JSON string (possibly cut off at the end), or one bracket: what the depth scan steps over.
_TOKENS: Final = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]')
#: What is not a bracket outside a string (strings, possibly cut off, and runs of other text).
_NOT_BRACKETS: Final = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[^\[\]{}"]++')
#: A pair of brackets with nothing between them (an innermost pair, once the rest is gone).
_PAIRS: Final = re.compile(r"\[\]|\{\}")
_OPEN: Final = frozenset("[{")
_CLOSE: Final = frozenset("]}")
_PLAIN: Final = json.JSONDecoder()


class JsonTooLarge(json.JSONDecodeError):
    """A document nested deeper than the limit, or longer: refused unread."""


def loads(
    data: str | bytes | bytearray,
    *,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
    decoder: json.JSONDecoder = _PLAIN,
) -> Any:
    """``json.loads(data)`` within the limits (bytes decoded as ``json.loads`` decodes them,
    a text with a BOM refused as it refuses it); :class:`JsonTooLarge` past them."""
    if len(data) > max_bytes:
        raise JsonTooLarge(f"the document is longer than {max_bytes} bytes", "", 0)
    if isinstance(data, bytes | bytearray):
        text = bytes(data).decode(json.detect_encoding(data), "surrogatepass")
    else:
        text = data
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    where = _too_deep_at(text, max_depth)
    if where is not None:
        raise JsonTooLarge(f"the document is nested deeper than {max_depth} levels", text, where)
    try:
        return decoder.decode(text)
    except RecursionError:
        raise JsonTooLarge("the document is nested too deep to read", text, 0) from None


def _too_deep_at(text: str, max_depth: int) -> int | None:
    """Where the nesting first goes past ``max_depth``, or None. Only a text with more
    brackets than that is looked at: first its brackets alone (strings left out), whose
    innermost pairs are taken away a level at a time; when nothing is left within
    ``max_depth`` levels the text is no deeper (the common case, without a loop per token). Else
    (deeper, or brackets that do not pair) it is scanned token by token (strings stepped over
    whole) for where it goes past."""
    if text.count("[") + text.count("{") <= max_depth:
        return None
    brackets = _NOT_BRACKETS.sub("", text)
    for _ in range(max_depth):
        inner = _PAIRS.sub("", brackets)
        if not inner:
            return None
        if inner == brackets:
            break
        brackets = inner
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth > max_depth:
                return match.start()
        elif token in _CLOSE:
            depth -= 1
    return None
