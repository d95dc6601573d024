"""The stored document of a record, derived from its dataclass fields.

Every record used to spell out a ``to_doc`` mapping each snake_case field to a camelCase key and
a ``from_doc`` doing the reverse; :class:`DocRecord` derives both from ``dataclasses.fields``, so
the document format lives in one place and a new field cannot be forgotten on one side.

The document is the field values in field order, under the camelCase of the field name unless
``field(metadata=doc_key("..."))`` names the key. Values are converted by the field's declared
type: a ``Mapping`` is stored as a plain dict, a ``tuple`` as a list (back to a tuple on load),
and a tuple of values that have ``to_doc``/``from_doc`` themselves (``tuple[Balance, ...]``)
element by element. Everything else is stored as is (str, int, bool, None).

Loading reads every field's key (a missing key raises ``KeyError``, the store holds only what
this code wrote) and ignores keys it does not know.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from typing import Any, Self

__all__ = ["DocRecord", "doc_key"]

_Convert = Callable[[Any], Any]


def doc_key(key: str) -> dict[str, str]:
    """Field metadata naming the document key where it is not the camelCase of the field name:
    ``name: str = field(metadata=doc_key("accountName"))``."""
    return {"doc": key}


class DocRecord:
    """Mixin for a frozen dataclass record: ``to_doc`` and ``from_doc`` from its fields."""

    def to_doc(self) -> dict[str, Any]:
        return {
            key: getattr(self, name) if dump is None else dump(getattr(self, name))
            for name, key, dump, _ in _plan(type(self))
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Self:
        """The record of ``doc``. A key the document lacks takes the field's default, so that a
        field added with a default still reads the records an earlier server stored (``--data``);
        a missing key without a default is a ``TypeError``, as for the constructor."""
        return cls(
            **{
                name: doc[key] if load is None else load(doc[key])
                for name, key, _, load in _plan(cls)
                if key in doc
            }
        )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


_Plan = tuple[tuple[str, str, _Convert | None, _Convert | None], ...]
#: The plan of each record class, worked out on first use.
_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    """Per field: attribute name, document key, and the dump and load conversions (None: the
    value is stored as is). Worked out once per class: records are dumped on every write."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _work_out_plan(cls)
    return plan


def _work_out_plan(cls: type) -> _Plan:
    hints = typing.get_type_hints(cls)
    return tuple(
        (
            item.name,
            item.metadata.get("doc", _camel(item.name)),
            *_converters(hints[item.name]),
        )
        for item in dataclasses.fields(cls)
    )


def _converters(hint: Any) -> tuple[_Convert | None, _Convert | None]:
    origin = typing.get_origin(hint)
    if origin is tuple:
        element = typing.get_args(hint)[0]
        if hasattr(element, "to_doc") and hasattr(element, "from_doc"):
            return (
                lambda values: [value.to_doc() for value in values],
                lambda items: tuple(element.from_doc(item) for item in items or ()),
            )
        return list, tuple
    if origin is Mapping or hint is Mapping:
        return dict, None
    return None, None
