"""Value types shared by the layers above the protocol model: who calls, what a call carries."""

from accord.core.inbound import ClientCertificate, Inbound
from accord.core.principal import (
    ANONYMOUS,
    ANONYMOUS_OWNER,
    STORED_OWNER,
    Principal,
    qualified_owner,
    unqualified_owner,
)

__all__ = [
    "ANONYMOUS",
    "ANONYMOUS_OWNER",
    "STORED_OWNER",
    "ClientCertificate",
    "Inbound",
    "Principal",
    "qualified_owner",
    "unqualified_owner",
]
