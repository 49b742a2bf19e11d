"""TenantCheck: the tenant a request names (`/{tenant}/...`, a 1.0 `tenant` field) must be
one its caller may use."""

from __future__ import annotations

import inspect
from collections.abc import Collection
from typing import Any

from accord.auth import TenantsOf
from accord.core import Principal
from accord.errors import PermissionDenied
from accord.server.pipeline import Call, Proceed


class TenantCheck:
    """Refuses (PermissionDenied) a call naming a tenant its principal may not use.

    The tenants a principal may use are what `tenants_of(principal)` answers (sync or async;
    None: any tenant), else the principal's own `tenant` when it has one. A principal with
    neither may name any tenant: the agent does not partition its callers by tenant (their
    tasks are theirs alone either way). A call naming no tenant is not checked.
    """

    def __init__(self, tenants_of: TenantsOf | None = None) -> None:
        self.tenants_of = tenants_of

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        tenant = call.context.tenant
        if tenant is not None:
            principal = call.context.principal
            allowed = await self.allowed(principal)
            if allowed is not None and tenant not in allowed:
                raise PermissionDenied(f"{principal.id} may not use the tenant {tenant!r}")
        return await proceed()

    async def allowed(self, principal: Principal) -> Collection[str] | None:
        """The tenants `principal` may use (None: any)."""
        if self.tenants_of is None:
            return None if principal.tenant is None else {principal.tenant}
        allowed = self.tenants_of(principal)
        if inspect.isawaitable(allowed):
            allowed = await allowed
        return allowed
