"""Reading and writing certificates and keys: PEM and PKCS#12, with clear errors for a file that is
not what it claims.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificatePublicKeyTypes,
    PrivateKeyTypes,
)
from cryptography.hazmat.primitives.serialization import pkcs12

from conformance.errors import CertificateError
from conformance.signing.certificates import CertificateAuthority, TppIdentity

_PKCS12_SUFFIXES = (".p12", ".pfx")
_PEM_KEY = re.compile(
    rb"-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----.+?-----END \1-----", re.DOTALL
)


_PEM_CERT_MARKER = b"-----BEGIN CERTIFICATE-----"

#: The environment variable that holds the signing key's password (a password in a flag would
#: show in ``ps``); named in every message about a key that needs one.
KEY_PASSWORD_ENV = "CONFORMANCE_KEY_PASSWORD"
#: The same for the TLS client key of mutual TLS (the QWAC).
TLS_KEY_PASSWORD_ENV = "CONFORMANCE_TLS_KEY_PASSWORD"
_GIVE_PASSWORD = f"give its password in the environment variable {KEY_PASSWORD_ENV}"


def _read_bytes(path: Path, what: str) -> bytes:
    if not path.exists():
        raise CertificateError(f"the {what} file {path} does not exist")
    if path.is_dir():
        raise CertificateError(f"the {what} path {path} is a directory, not a file")
    try:
        return path.read_bytes()
    except OSError as error:
        raise CertificateError(f"the {what} file {path} cannot be read: {error.strerror}") from None


def _password_bytes(password: str | bytes | None) -> bytes | None:
    return password.encode("utf-8") if isinstance(password, str) else password


def _load_certificates(data: bytes, path: Path) -> list[x509.Certificate]:
    """Every certificate in a PEM file (in order), or the one in a DER file."""
    try:
        if _PEM_CERT_MARKER in data:
            return x509.load_pem_x509_certificates(data)
        return [x509.load_der_x509_certificate(data)]
    except ValueError:
        raise CertificateError(
            f"{path} does not hold a readable X.509 certificate (PEM or DER)"
        ) from None


def _load_private_key(data: bytes, path: Path, password: bytes | None) -> rsa.RSAPrivateKey:
    """The private key in ``data`` (a PEM block anywhere in it, or DER)."""
    match = _PEM_KEY.search(data)
    if match is None and b"-----BEGIN" in data:
        raise CertificateError(f"{path} holds no PEM private key")
    try:
        if match is not None:
            key = _parse_key(match.group(0), password, pem=True)
        else:
            key = _parse_key(data, password, pem=False)
    except TypeError:  # encrypted but no password given
        raise CertificateError(
            f"the private key in {path} is encrypted; {_GIVE_PASSWORD}"
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        if password is None:
            raise CertificateError(f"{path} holds no readable private key (PEM or DER)") from None
        raise CertificateError(
            f"the private key in {path} cannot be read: wrong password, or not a private key"
        ) from None
    return _require_rsa(key, path)


def _parse_key(data: bytes, password: bytes | None, *, pem: bool) -> PrivateKeyTypes:
    """Parse a PEM or DER key; a password given for an unencrypted key is ignored, not refused."""
    loader = serialization.load_pem_private_key if pem else serialization.load_der_private_key
    try:
        return loader(data, password)
    except TypeError:
        if password is None:
            raise
        return loader(data, None)


def _require_rsa(key: PrivateKeyTypes, path: Path) -> rsa.RSAPrivateKey:
    if not isinstance(key, rsa.RSAPrivateKey):
        raise CertificateError(
            f"the private key in {path} is not an RSA key; spec 5 signs with rsa-sha256"
        )
    return key


def _public_der(key: CertificatePublicKeyTypes) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _check_pair(
    certificate: x509.Certificate, key: rsa.RSAPrivateKey, cert_path: Path, key_path: Path
) -> None:
    if _public_der(certificate.public_key()) != _public_der(key.public_key()):
        where = f"in {key_path}" if key_path != cert_path else f"in {cert_path}"
        raise CertificateError(
            f"the private key {where} does not belong to the certificate in {cert_path}"
        )


def _issuer_of(
    certificate: x509.Certificate, others: Iterable[x509.Certificate]
) -> x509.Certificate | None:
    """The certificate among ``others`` whose subject is ``certificate``'s issuer."""
    return next((other for other in others if other.subject == certificate.issuer), None)


def load_identity(
    cert_path: str | os.PathLike[str],
    key_path: str | os.PathLike[str] | None = None,
    *,
    password: str | bytes | None = None,
) -> TppIdentity:
    """A TPP identity from files.

    - PKCS#12 (``.p12``/``.pfx``): one file holding key, certificate and maybe the CA;
      ``key_path`` must be None and ``password`` opens it.
    - PEM (or DER): the certificate file, optionally followed by its CA in the same file, and
      the key either in ``key_path`` or in the certificate file itself; ``password`` decrypts
      an encrypted key.

    The CA certificate is kept when the files hold it (matched by issuer name).
    """
    cert_file = Path(cert_path)
    secret = _password_bytes(password)
    if cert_file.suffix.lower() in _PKCS12_SUFFIXES:
        if key_path is not None:
            raise CertificateError(
                f"{cert_file} is a PKCS#12 file, which holds its own key; give no separate key file"
            )
        return _load_pkcs12(cert_file, secret)
    data = _read_bytes(cert_file, "certificate")
    certificates = _load_certificates(data, cert_file)
    certificate = certificates[0]
    if key_path is None:
        if _PEM_KEY.search(data) is None:
            raise CertificateError(f"{cert_file} holds no private key; give the key file as well")
        key_file = cert_file
        key = _load_private_key(data, cert_file, secret)
    else:
        key_file = Path(key_path)
        key = _load_private_key(_read_bytes(key_file, "private key"), key_file, secret)
    _check_pair(certificate, key, cert_file, key_file)
    return TppIdentity(
        certificate=certificate,
        private_key=key,
        ca_certificate=_issuer_of(certificate, certificates[1:]),
    )


def _load_pkcs12(path: Path, password: bytes | None) -> TppIdentity:
    data = _read_bytes(path, "PKCS#12")
    try:
        bundle = pkcs12.load_pkcs12(data, password)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        reason = (
            f"it needs a password ({_GIVE_PASSWORD}), or is not a PKCS#12 file"
            if password is None
            else "the password is wrong, or it is not a PKCS#12 file"
        )
        raise CertificateError(f"{path} cannot be opened: {reason}") from None
    if bundle.cert is None:
        raise CertificateError(f"the PKCS#12 file {path} holds no certificate with its key")
    if bundle.key is None:
        raise CertificateError(f"the PKCS#12 file {path} holds no private key")
    certificate = bundle.cert.certificate
    key = _require_rsa(bundle.key, path)
    _check_pair(certificate, key, path, path)
    others = [entry.certificate for entry in bundle.additional_certs]
    return TppIdentity(
        certificate=certificate, private_key=key, ca_certificate=_issuer_of(certificate, others)
    )


def load_certificate(
    path: str | os.PathLike[str], *, password: str | bytes | None = None
) -> x509.Certificate:
    """The (first) certificate of a PEM or DER file, or of a PKCS#12 file (``password`` opens
    it), without its key: what a certificate check needs."""
    file = Path(path)
    if file.suffix.lower() in _PKCS12_SUFFIXES:
        data = _read_bytes(file, "PKCS#12")
        try:
            bundle = pkcs12.load_pkcs12(data, _password_bytes(password))
        except (ValueError, TypeError, UnsupportedAlgorithm):
            raise CertificateError(
                f"{file} cannot be opened: the password is wrong or missing, or it is not PKCS#12"
            ) from None
        if bundle.cert is None:
            raise CertificateError(f"the PKCS#12 file {file} holds no certificate")
        return bundle.cert.certificate
    return _load_certificates(_read_bytes(file, "certificate"), file)[0]


def load_ca(
    cert_path: str | os.PathLike[str],
    key_path: str | os.PathLike[str],
    *,
    password: str | bytes | None = None,
) -> CertificateAuthority:
    """A CA from its PEM certificate and key, to issue more certificates a bank already trusts."""
    cert_file, key_file = Path(cert_path), Path(key_path)
    certificate = _load_certificates(_read_bytes(cert_file, "CA certificate"), cert_file)[0]
    key = _load_private_key(
        _read_bytes(key_file, "CA private key"), key_file, _password_bytes(password)
    )
    _check_pair(certificate, key, cert_file, key_file)
    return CertificateAuthority(certificate=certificate, private_key=key)


def _pkcs8(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write(path: Path, data: bytes, *, secret: bool = False) -> Path:
    """Write ``data``; a secret file is created with mode 0600 and tightened if it existed."""
    if secret:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.chmod(path, 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
    else:
        path.write_bytes(data)
    return path


def write_identity(
    identity: TppIdentity,
    directory: str | os.PathLike[str],
    *,
    ca: CertificateAuthority | None = None,
    p12_password: str | None = None,
    stem: str = "tpp",
) -> dict[str, Path]:
    """Write the identity (and the CA) to ``directory``; returns what was written, by role.

    Keys of the result: ``certificate`` (tpp.pem), ``key`` (tpp.key: PKCS#8, unencrypted, mode
    0600), ``pkcs12`` (tpp.p12 holding key, certificate and CA; encrypted with ``p12_password``
    when given), ``ca_certificate`` (ca.pem, when the CA is known) and ``ca_key`` (ca.key, mode
    0600, only when ``ca`` is given). ``stem`` replaces ``tpp`` in the names (``qwac`` for the
    TLS client certificate). Existing files are overwritten.
    """
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CertificateError(f"cannot create the directory {folder}: {error.strerror}") from None
    ca_certificate = ca.certificate if ca is not None else identity.ca_certificate
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if p12_password is None
        else serialization.BestAvailableEncryption(p12_password.encode("utf-8"))
    )
    pem = serialization.Encoding.PEM
    written: dict[str, Path] = {}
    try:
        written["certificate"] = _write(
            folder / f"{stem}.pem", identity.certificate.public_bytes(pem)
        )
        written["key"] = _write(folder / f"{stem}.key", _pkcs8(identity.private_key), secret=True)
        written["pkcs12"] = _write(
            folder / f"{stem}.p12",
            pkcs12.serialize_key_and_certificates(
                name=stem.encode(),
                key=identity.private_key,
                cert=identity.certificate,
                cas=None if ca_certificate is None else [ca_certificate],
                encryption_algorithm=encryption,
            ),
            secret=True,
        )
        if ca_certificate is not None:
            written["ca_certificate"] = _write(folder / "ca.pem", ca_certificate.public_bytes(pem))
        if ca is not None:
            written["ca_key"] = _write(folder / "ca.key", _pkcs8(ca.private_key), secret=True)
    except OSError as error:
        raise CertificateError(
            f"cannot write the certificate files to {folder}: {error.strerror}"
        ) from None
    return written
