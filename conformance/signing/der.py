"""The small DER codec the PSD2 QCStatement needs: SEQUENCE, OBJECT IDENTIFIER, UTF8String, with
definite lengths in short and long form.
"""

from __future__ import annotations

TAG_OID = 0x06
TAG_UTF8 = 0x0C
TAG_SEQUENCE = 0x30


class DerError(ValueError):
    """The bytes are not the DER this module expects; the message says where and why."""


def encode_length(length: int) -> bytes:
    """Short form below 128, otherwise 0x80|n followed by n big-endian octets (X.690 8.1.3)."""
    if length < 0:
        raise ValueError(f"a DER length cannot be negative: {length}")
    if length < 0x80:
        return bytes([length])
    octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets


def encode_tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + encode_length(len(content)) + content


def encode_sequence(*items: bytes) -> bytes:
    return encode_tlv(TAG_SEQUENCE, b"".join(items))


def encode_utf8(text: str) -> bytes:
    return encode_tlv(TAG_UTF8, text.encode("utf-8"))


def encode_oid(dotted: str) -> bytes:
    """X.690 8.19: the first two arcs share one sub-identifier (40*a + b), each in base 128."""
    try:
        arcs = [int(part) for part in dotted.split(".")]
    except ValueError:
        raise ValueError(f"not a dotted object identifier: {dotted!r}") from None
    if len(arcs) < 2 or arcs[0] not in (0, 1, 2) or (arcs[0] < 2 and arcs[1] >= 40):
        raise ValueError(f"not a valid object identifier: {dotted!r}")
    if any(arc < 0 for arc in arcs):
        raise ValueError(f"object identifier arcs cannot be negative: {dotted!r}")
    content = bytearray()
    for value in [40 * arcs[0] + arcs[1], *arcs[2:]]:
        groups = [value & 0x7F]
        value >>= 7
        while value:
            groups.append(0x80 | (value & 0x7F))
            value >>= 7
        content.extend(reversed(groups))
    return encode_tlv(TAG_OID, bytes(content))


def read_tlv(data: bytes, offset: int) -> tuple[int, bytes, int]:
    """The element at ``offset``: (tag, content, next offset). Definite, minimal lengths only."""
    if offset >= len(data):
        raise DerError(f"expected an element at offset {offset}, found the end of the data")
    tag = data[offset]
    if tag & 0x1F == 0x1F:
        raise DerError(f"high-tag-number form at offset {offset} is not expected here")
    position = offset + 1
    if position >= len(data):
        raise DerError(f"the element at offset {offset} has no length")
    first = data[position]
    position += 1
    if first < 0x80:
        length = first
    elif first == 0x80:
        raise DerError(f"indefinite length at offset {offset} is not allowed in DER")
    else:
        count = first & 0x7F
        octets = data[position : position + count]
        if len(octets) != count:
            raise DerError(f"the length of the element at offset {offset} is truncated")
        length = int.from_bytes(octets, "big")
        if length < 0x80 or octets[0] == 0:
            raise DerError(f"the length at offset {offset} is not in its shortest form (DER)")
        position += count
    end = position + length
    if end > len(data):
        raise DerError(
            f"the element at offset {offset} claims {length} octets, "
            f"only {len(data) - position} remain"
        )
    return tag, data[position:end], end


def read_single(data: bytes, expected_tag: int, what: str) -> bytes:
    """The content of ``data``, which must be exactly one element with ``expected_tag``."""
    tag, content, end = read_tlv(data, 0)
    if tag != expected_tag:
        raise DerError(f"{what} has tag 0x{tag:02X}, expected 0x{expected_tag:02X}")
    if end != len(data):
        raise DerError(f"{len(data) - end} unexpected octets after {what}")
    return content


def split(content: bytes) -> list[bytes]:
    """The encoded elements (whole TLVs) inside a constructed value, in order."""
    elements = []
    offset = 0
    while offset < len(content):
        _, _, end = read_tlv(content, offset)
        elements.append(content[offset:end])
        offset = end
    return elements


def decode_oid(element: bytes, what: str) -> str:
    content = read_single(element, TAG_OID, what)
    if not content:
        raise DerError(f"{what} is an empty object identifier")
    values: list[int] = []
    value = 0
    fresh = True
    for octet in content:
        if fresh and octet == 0x80:
            raise DerError(f"{what} has a sub-identifier with a leading 0x80 octet (not DER)")
        value = (value << 7) | (octet & 0x7F)
        fresh = not octet & 0x80
        if fresh:
            values.append(value)
            value = 0
    if not fresh:
        raise DerError(f"{what} ends in the middle of a sub-identifier")
    first = values[0]
    head = [0, first] if first < 40 else [1, first - 40] if first < 80 else [2, first - 80]
    return ".".join(str(arc) for arc in head + values[1:])


def decode_utf8(element: bytes, what: str) -> str:
    content = read_single(element, TAG_UTF8, what)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise DerError(f"{what} is not valid UTF-8") from None


def decode_sequence(element: bytes, what: str) -> list[bytes]:
    return split(read_single(element, TAG_SEQUENCE, what))
