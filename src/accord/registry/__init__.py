"""A curated registry of A2A agents: cards added by URL, checked and re-checked, searched over
HTTP and over A2A (`accord registry serve`, docs/registry.md)."""

from accord.registry.app import create_registry_app, registry_agent
from accord.registry.catalog import DEFAULT_CATALOG_URL, CardCatalog, open_catalog
from accord.registry.checks import CardRejected, CardUnreachable
from accord.registry.curators import CURATOR_SCOPE, Curators
from accord.registry.records import AgentRecord, Change, SearchPage
from accord.registry.search import SearchError, SearchQuery
from accord.registry.service import Registry, UnknownAgent

__all__ = [
    "CURATOR_SCOPE",
    "DEFAULT_CATALOG_URL",
    "AgentRecord",
    "CardCatalog",
    "CardRejected",
    "CardUnreachable",
    "Change",
    "Curators",
    "Registry",
    "SearchError",
    "SearchPage",
    "SearchQuery",
    "UnknownAgent",
    "create_registry_app",
    "open_catalog",
    "registry_agent",
]
