"""Value types shared by the layers above the protocol model: who calls, what a call carries."""

from accord.core.inbound import ClientCertificate, Inbound
from accord.core.principal import ANONYMOUS, Principal

__all__ = ["ANONYMOUS", "ClientCertificate", "Inbound", "Principal"]
