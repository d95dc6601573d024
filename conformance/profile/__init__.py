"""The target profile: one TOML file read and checked (every key documented in
``docs/reference/profile.md``, an unknown key an error), and merged with command-line options.

``model`` holds the value (:class:`TargetProfile` and its nested settings), ``load`` reads the
file, ``options`` puts the environment and the command line on top; ``bank``, ``paths``,
``parts``, ``templates``, ``tls_settings``, ``lifecycle``, ``consent_model``,
``response_headers`` and ``operation_promises`` read and hold the tables (or keys) of their own;
``oauth``
the token endpoint, ``negative_certificates`` the ready-made negative certificates, and
``toml_table`` the typed getters every reader uses (an unknown key refused). The package sits
below the bank side so that the reference server reads the same file through the same loader
to play that bank.
"""

from conformance.profile.bank import ENV_PREFIX, Waiver
from conformance.profile.consent_model import CONSENT_MODELS, ConsentModel, ConsentSettings
from conformance.profile.load import load_profile, profile_data, profile_files
from conformance.profile.model import (
    PRODUCT_OPERATIONS,
    ConnectionSettings,
    MaskSettings,
    SecondIdentity,
    TargetProfile,
)
from conformance.profile.negative_certificates import NegativeCertificate, NegativeCertificates
from conformance.profile.oauth import OAuthSettings
from conformance.profile.operation_promises import OperationPromises
from conformance.profile.options import (
    DEMANDING_PROFILE,
    ENV_PROFILE,
    ENV_TARGET,
    ENV_TOKEN_URL,
    PERMISSIVE_PROFILE,
    REFERENCE_PROFILE,
    profile_from_options,
)
from conformance.profile.parts import (
    SCA_MODES,
    CorporatePsu,
    Hooks,
    PaymentAccounts,
    PreparedStates,
    PrivatePsu,
    ProductionData,
    ScaMode,
    ScaSettings,
)
from conformance.profile.paths import PAYMENT_SERVICE, PERIODIC_SERVICE
from conformance.profile.response_headers import PROMISABLE_HEADERS, ResponseHeaderPromises
from conformance.profile.tls_settings import TlsSettings

__all__ = [
    "CONSENT_MODELS",
    "DEMANDING_PROFILE",
    "ENV_PREFIX",
    "ENV_PROFILE",
    "ENV_TARGET",
    "ENV_TOKEN_URL",
    "PAYMENT_SERVICE",
    "PERIODIC_SERVICE",
    "PERMISSIVE_PROFILE",
    "PRODUCT_OPERATIONS",
    "PROMISABLE_HEADERS",
    "REFERENCE_PROFILE",
    "SCA_MODES",
    "ConnectionSettings",
    "ConsentModel",
    "ConsentSettings",
    "CorporatePsu",
    "Hooks",
    "MaskSettings",
    "NegativeCertificate",
    "NegativeCertificates",
    "OAuthSettings",
    "OperationPromises",
    "PaymentAccounts",
    "PreparedStates",
    "PrivatePsu",
    "ProductionData",
    "ResponseHeaderPromises",
    "ScaMode",
    "ScaSettings",
    "SecondIdentity",
    "TargetProfile",
    "TlsSettings",
    "Waiver",
    "load_profile",
    "profile_data",
    "profile_files",
    "profile_from_options",
]
