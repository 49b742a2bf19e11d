"""Authentication on the server: security schemes declared once, enforced for every binding."""

from accord.auth.api_key import ApiKey
from accord.auth.authenticator import SecurityAuthenticator
from accord.auth.discovery import Discovery
from accord.auth.http import Basic, Bearer
from accord.auth.mtls import MutualTls
from accord.auth.oauth import OAuth2, OpenIdConnect
from accord.auth.scheme import InvalidCredential, Scheme, Verified
from accord.auth.security import OwnerOf, Policy, Requirement, Security, TenantsOf
from accord.auth.tokens import JwtCheck, token_scopes

__all__ = [
    "ApiKey",
    "Basic",
    "Bearer",
    "Discovery",
    "InvalidCredential",
    "JwtCheck",
    "MutualTls",
    "OAuth2",
    "OpenIdConnect",
    "OwnerOf",
    "Policy",
    "Requirement",
    "Scheme",
    "Security",
    "SecurityAuthenticator",
    "TenantsOf",
    "Verified",
    "token_scopes",
]
