"""The contract's parts as frozen values: operations, parameters, responses, rules, assumptions,
quotes of the spec."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import quote

from conformance._types import Schema

#: A JSON Schema as loaded from ``schemas/`` (a ``dict``; never mutate it).
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
#: The ids spec 4.1 numbers (E1 … E18); the other operations are ones it only names or implies.
_NUMBERED_ID = re.compile(r"E([1-9][0-9]*)")


def operation_number(operation_id: str) -> int | None:
    """The number spec 4.1 gives the operation ``operation_id`` (16 for E16), None for an
    operation the spec only names or implies (PS, AT, BR, ...)."""
    found = _NUMBERED_ID.fullmatch(operation_id)
    return int(found.group(1)) if found else None


def operation_order(operation_id: str) -> tuple[int, int, str]:
    """E1 … E18 in their numeric order first, then the other operations by id."""
    number = operation_number(operation_id)
    return (0, number, "") if number is not None else (1, 0, operation_id)


@dataclass(frozen=True, slots=True)
class Assumption:
    """A choice the spec leaves open ("not shown"), recorded so a verdict can say it rests on it."""

    topic: str
    text: str


@dataclass(frozen=True, slots=True)
class Quote:
    """One verbatim quote of the spec (``schemas/quotes.json``): a must requirement names the
    labels of the quotes that state it, and a must failure shows their text."""

    label: str
    spec: str
    text: str

    @property
    def plain(self) -> str:
        """The sentence as a reader sees it, not as Markdown: no backticks or bold marks, and a
        table row's cells as ``creditorName: string; yes; at most 70 characters`` (the first
        cell names what the row is about; empty cells left out)."""
        plain = self.text.replace("`", "").replace("**", "").strip()
        if not (plain.startswith("|") and plain.endswith("|")):
            return plain
        cells = [cell.strip() for cell in plain.strip("|").split("|") if cell.strip()]
        return f"{cells[0]}: {'; '.join(cells[1:])}" if len(cells) > 1 else "".join(cells)


def said(quotes: Iterable[Quote]) -> str:
    """What the spec says, as the reports show it: ``spec 2.7: "creditorName: ..."; spec 8:
    "..."``. Each sentence once, as plain text (:attr:`Quote.plain`), naming its spec part; a
    sentence that another one shown contains (the same row of a table with fewer words) is said
    by that one."""
    texts: dict[str, str] = {}
    for each in quotes:
        texts.setdefault(each.plain, each.spec)
    kept = [
        (spec, text)
        for text, spec in texts.items()
        if not any(text != other and text in other for other in texts)
    ]
    return "; ".join(f'{spec}: "{text}"' for spec, text in kept)


@dataclass(frozen=True, slots=True)
class Parameter:
    """A path or query parameter of an operation (headers are listed by name, see spec 4.2)."""

    name: str
    location: str
    required: bool
    schema: Schema
    spec: str
    description: str = ""

    @property
    def pinned_values(self) -> tuple[str, ...] | None:
        """The values a path parameter's ``const``/``enum`` allows, or ``None`` when it is free.

        This is how the router tells E16 from E18: both live on one template and differ only in
        the ``payment-product`` const (spec 4.1, spec 4.3 E16/E18).
        """
        if "const" in self.schema:
            return (str(self.schema["const"]),)
        if "enum" in self.schema:
            return tuple(str(value) for value in self.schema["enum"])
        return None


@dataclass(frozen=True, slots=True)
class Response:
    """One documented response of an operation; ``schema`` is ``None`` when no body is shown."""

    status: int
    description: str
    schema: Schema | None
    spec: str
    #: Labels of the quotes that state this answer (its body, its outcome).
    quotes: tuple[str, ...] = ()
    #: When the exact status is not shown (a read answering 200, a creation 201): our reading
    #: of it. The answer's class (2xx) stays must, the exact status is a should.
    status_reading: str = ""
    #: When the body is not shown: our reading of it; its schema is judged at should.
    reading: str = ""
    #: The 401 that is the SCA redirect form of a success (spec 5 item 6).
    sca_redirect: bool = False


#: What a rule row's ``stated`` may say, and what the suite then chose of the expected answer
#: ("": nothing; "code": the error code; "status": the status and the code).
CHOSEN_OF_STATED: Mapping[str, str] = MappingProxyType(
    {
        "status-and-code": "",
        "status": "code",
        "refusal": "status",
        "outcome": "",
        "reading": "",
    }
)
#: The ``stated`` value of a requirement that rests on the suite's reading (graded should).
STATED_READING = "reading"


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of ``rules.json``: a requirement with its expected answer (spec 7, spec 8, 2.7)."""

    id: str
    spec: str
    operations: tuple[str, ...]
    precondition: str | None
    action: str
    expected_status: tuple[int, ...]
    expected_code: str | None
    stated: str
    check: str
    #: Labels of the quotes that state the requirement (``quotes.json``); every must row has some.
    quotes: tuple[str, ...] = ()
    #: The reading a ``stated: reading`` row rests on ("our reading: ..." in the reports).
    reading: str = ""
    #: Operations on which the requirement rests on a reading although the row is stated
    #: elsewhere (operation id → the reading): graded should there.
    readings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def level(self) -> str:
        """``should`` when the requirement rests on the suite's reading, else ``must``."""
        return "should" if self.stated == STATED_READING else "must"

    def level_on(self, operation_id: str) -> str:
        """The level on one operation: should where the row names a reading for it."""
        return "should" if operation_id in self.readings else self.level

    def reading_on(self, operation_id: str) -> str:
        """The reading the requirement rests on for one operation ("" when it is stated)."""
        return self.readings.get(operation_id, self.reading)

    @property
    def chosen(self) -> str:
        """What of the expected answer the suite chose (``requirements.answer_due``)."""
        return CHOSEN_OF_STATED[self.stated]


@dataclass(frozen=True, slots=True, repr=False)
class Operation:
    """One operation of the interface (E1 … E18 or a referenced operation such as PS)."""

    id: str
    name: str
    spec: str
    family: str
    method: str
    path: str
    success_status: int
    parameters: tuple[Parameter, ...]
    required_headers: tuple[str, ...]
    optional_headers: tuple[str, ...]
    headers_spec: str
    request_schema: Schema | None
    request_spec: str | None
    responses: Mapping[int, Response]
    assumptions: tuple[Assumption, ...]
    source: str = ""
    #: Labels of the quotes that show the operation's header set (its spec 4.2 row).
    headers_quotes: tuple[str, ...] = ()
    #: An operation a bank may not offer at all (the platform's sandbox reset, SI): judged only
    #: where the profile names it (``[operations] optional``), else not applicable.
    optional: bool = False
    #: An operation interface.md neither shows nor names (BR, BS, PCA, SI): that a bank offers
    #: it is the bank's own promise (``[operations] promised``), not a sentence of the spec.
    unnamed: bool = False
    #: Headers the suite sends beyond the required ones where the spec does not show the
    #: operation's set: the required TPP headers of its nearest stated operation
    #: (``headers.sentLike``) that it lists as optional. Every set a bank may choose accepts
    #: them; none is required of the bank.
    also_sent: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<Operation {self.id} {self.method} {self.path}>"

    @property
    def numbered(self) -> bool:
        """Whether spec 4.1 numbers the operation (E1 … E18): its rows in the spec's tables make
        a requirement on it must, where one on an operation the spec only names or implies
        rests on the contract's assumptions and is should."""
        return operation_number(self.id) is not None

    @property
    def unnamed_reading(self) -> str:
        """The reading every verdict on an unnamed operation rests on ("" for the others)."""
        if not self.unnamed:
            return ""
        return (
            f"{self.id} ({self.name}) is an operation interface.md neither shows nor names; the "
            "contract assumes it as the platform's banks offer it, and a bank is held to it "
            "only where its profile promises it ([operations] promised)"
        )

    @property
    def sca_redirect_status(self) -> int | None:
        """The status of the operation's SCA redirect form of a success (spec 5 item 6), if any."""
        return next((s for s, r in self.responses.items() if r.sca_redirect), None)

    @property
    def success_responses(self) -> tuple[Response, ...]:
        """The documented 2xx answers, else the one of ``success_status``."""
        found = tuple(r for s, r in sorted(self.responses.items()) if 200 <= s < 300)
        return found or (self.responses[self.success_status],)

    @property
    def status_reading(self) -> str:
        """Our reading of the exact success status where the spec shows only the body ("")."""
        return next((r.status_reading for r in self.success_responses if r.status_reading), "")

    @property
    def path_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.location == "path")

    @property
    def query_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.location == "query")

    @property
    def fixed_path_values(self) -> Mapping[str, str]:
        """Path parameters whose schema is a ``const`` (``payment-product`` of E16/E17/E18)."""
        return {p.name: str(p.schema["const"]) for p in self.path_parameters if "const" in p.schema}

    def render_path(self, **path_values: str) -> str:
        """Fill the path template; ``const`` parameters are filled unless a value is given.

        A given value wins over the ``const`` so that a negative scenario can send an unknown
        product (spec 7: PRODUCT_UNKNOWN). Values are percent-encoded as one path segment.
        """
        values = {**self.fixed_path_values, **path_values}
        names = [match.group(1) for match in _PLACEHOLDER.finditer(self.path)]
        unknown = sorted(set(path_values) - set(names))
        if unknown:
            raise ValueError(f"{self.id}: {self.path} has no path parameter {', '.join(unknown)}")
        missing = [name for name in names if name not in values]
        if missing:
            raise ValueError(f"{self.id}: {self.path} needs a value for {', '.join(missing)}")
        return _PLACEHOLDER.sub(lambda m: quote(str(values[m.group(1)]), safe=""), self.path)


@dataclass(frozen=True, slots=True)
class FlowRow:
    """One row of ``flows.json``: a flow of several requests, its level, and the quotes that state
    its outcome (must) or the reading it rests on (should). ``each`` repeats the row per payment
    product (``{product}`` in ``operation`` and ``steps``) or per enum value of a query parameter
    (``{value}`` in ``slug``, ``title`` and ``params``)."""

    operation: str
    slug: str
    name: str
    spec: str
    level: str
    title: str
    steps: tuple[str, ...]
    params: tuple[tuple[str, str], ...] = ()
    needs_sca: bool = False
    needs_control: bool = False
    quotes: tuple[str, ...] = ()
    reading: str = ""
    each: str = ""
