"""Spec 5: request signing (draft-cavage-http-signatures-10 as the PSD2 framework profiles it),
its verification, and the test certificates with the PSD2 QCStatement.

The public names of the package; each lives in one module by topic: ``signer`` and
``canonical`` (the Signature and Digest), ``verify`` (which check failed, and the signing string
it rebuilt), ``keyid`` (the keyId and its renderings), ``certificates``, ``tls_certificates``,
``qcstatement`` and ``der`` (test certificates with the PSD2 QCStatement), ``keyfiles`` (PEM and
PKCS#12), ``revocation`` (the CAs' revocation lists), ``lint`` (a TPP's certificate checked as a
bank will) and ``broken_signers`` (the deliberately wrong signers of the auth scenarios). One of
the two kernels the reference server may import.
"""

from conformance.signing.broken_signers import (
    BodyChangedAfterSigningSigner,
    IncompleteHeadersSigner,
    KeyIdIssuerMismatchSigner,
    KeyIdSerialMismatchSigner,
    NoDigestSigner,
    NoSignatureSigner,
    StaleDigestSigner,
    WrongAlgorithmSigner,
    WrongKeySigner,
)
from conformance.signing.canonical import (
    DEFAULT_SIGNED_HEADERS,
    DIGEST_ALGORITHMS,
    REQUEST_TARGET,
    SIGNATURE_ALGORITHM,
    SPEC5_SIGNED_HEADERS,
    SigningStringError,
    build_signing_string,
    decode_header_value,
    digest_header_value,
    encode_header_value,
    sign_signing_string,
    verify_signature,
)
from conformance.signing.certificates import (
    CertificateAuthority,
    TppIdentity,
    default_ca,
    default_identity,
    generate_ca,
    generate_tpp_identity,
    verify_chain,
)
from conformance.signing.keyfiles import (
    KEY_PASSWORD_ENV,
    TLS_KEY_PASSWORD_ENV,
    load_ca,
    load_certificate,
    load_identity,
    write_identity,
)
from conformance.signing.keyid import (
    KeyIdStyle,
    MalformedSignatureError,
    SignatureParameters,
    issuer_matches,
    load_signature_certificate,
    parse_key_id,
    parse_signature_header,
)
from conformance.signing.qcstatement import (
    PSD2_QC_STATEMENT_OID,
    PSD2_ROLE_OIDS,
    PSD2_ROLES,
    QC_STATEMENTS_OID,
    Psd2Statement,
    QcStatements,
    RoleOfPsp,
    decode_psd2_statement,
    encode_psd2_qc_statements,
    read_psd2_roles,
    read_psd2_statement,
    read_qc_statements,
    read_qc_types,
)
from conformance.signing.signer import (
    SignatureAuth,
    SigningCredentials,
)
from conformance.signing.tls_certificates import generate_qwac, generate_server_certificate
from conformance.signing.verify import (
    Verification,
    VerificationFailure,
    verify_httpx_request,
    verify_request,
)

__all__ = [
    "DEFAULT_SIGNED_HEADERS",
    "DIGEST_ALGORITHMS",
    "KEY_PASSWORD_ENV",
    "PSD2_QC_STATEMENT_OID",
    "PSD2_ROLES",
    "PSD2_ROLE_OIDS",
    "QC_STATEMENTS_OID",
    "REQUEST_TARGET",
    "SIGNATURE_ALGORITHM",
    "SPEC5_SIGNED_HEADERS",
    "TLS_KEY_PASSWORD_ENV",
    "BodyChangedAfterSigningSigner",
    "CertificateAuthority",
    "IncompleteHeadersSigner",
    "KeyIdIssuerMismatchSigner",
    "KeyIdSerialMismatchSigner",
    "KeyIdStyle",
    "MalformedSignatureError",
    "NoDigestSigner",
    "NoSignatureSigner",
    "Psd2Statement",
    "QcStatements",
    "RoleOfPsp",
    "SignatureAuth",
    "SignatureParameters",
    "SigningCredentials",
    "SigningStringError",
    "StaleDigestSigner",
    "TppIdentity",
    "Verification",
    "VerificationFailure",
    "WrongAlgorithmSigner",
    "WrongKeySigner",
    "build_signing_string",
    "decode_header_value",
    "decode_psd2_statement",
    "default_ca",
    "default_identity",
    "digest_header_value",
    "encode_header_value",
    "encode_psd2_qc_statements",
    "generate_ca",
    "generate_qwac",
    "generate_server_certificate",
    "generate_tpp_identity",
    "issuer_matches",
    "load_ca",
    "load_certificate",
    "load_identity",
    "load_signature_certificate",
    "parse_key_id",
    "parse_signature_header",
    "read_psd2_roles",
    "read_psd2_statement",
    "read_qc_statements",
    "read_qc_types",
    "sign_signing_string",
    "verify_chain",
    "verify_httpx_request",
    "verify_request",
    "verify_signature",
    "write_identity",
]
