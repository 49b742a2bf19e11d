"""The tenant a request names (HTTP+JSON `/{tenant}/...`, the 1.0 `tenant` field over JSON-RPC
and gRPC) must be one its caller may use: PermissionDenied otherwise, on every binding."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterator

import grpc
import httpx
import pytest

from accord import Agent
from accord.auth import ApiKey, Security
from accord.core import ANONYMOUS, ANONYMOUS_OWNER, Principal
from accord.grpc.generated.v1_0 import a2a_pb2 as pb10
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc10
from accord.samples import echo
from accord.server.limits import NO_LIMITS
from operations import Server
from test_operations import serve

CALLERS = {
    "key-of-ann": Principal("ann", tenant="acme"),  # her credential names her tenant
    "key-of-max": Principal("max"),  # the policy below lists his
    "key-of-sam": Principal("sam"),  # neither: any tenant
}
GRANTS = {"max": {"acme", "globex"}}


def tenants_of(principal: Principal) -> Collection[str] | None:
    if principal.id in GRANTS:
        return GRANTS[principal.id]
    return {principal.tenant} if principal.tenant else None


def agent(tenants: bool) -> Agent:
    security = Security(ApiKey(verify=CALLERS.get), tenants=tenants_of if tenants else None)
    return Agent(echo.agent.executor, name="Tenanted agent", security=security)


@pytest.fixture(scope="module", params=[False, True], ids=["principal's tenant", "policy"])
def policy(request: pytest.FixtureRequest) -> bool:
    given: bool = request.param
    return given


@pytest.fixture(scope="module")
def server(policy: bool) -> Iterator[Server]:
    with serve(agent(policy), limits=NO_LIMITS) as served:
        yield served


async def rest(server: Server, key: str, tenant: str | None) -> str:
    path = f"/{tenant}/tasks" if tenant else "/tasks"
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        response = await http.get(path, headers={"X-API-Key": key, "A2A-Version": "1.0"})
    if response.status_code == 200:
        return "ok"
    reason: str = response.json()["error"]["status"]
    return reason


async def jsonrpc(server: Server, key: str, tenant: str | None) -> str:
    params = {"tenant": tenant} if tenant else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
    headers = {"X-API-Key": key, "A2A-Version": "1.0"}
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        answer = (await http.post("/", json=body, headers=headers)).json()
    return "ok" if "result" in answer else str(answer["error"]["code"])


async def over_grpc(server: Server, key: str, tenant: str | None) -> str:
    async with grpc.aio.insecure_channel(server.grpc_target) as channel:
        stub = rpc10.A2AServiceStub(channel)
        try:
            await stub.ListTasks(
                pb10.ListTasksRequest(tenant=tenant or ""), metadata=(("x-api-key", key),)
            )
        except grpc.aio.AioRpcError as refused:
            return refused.code().name
    return "ok"


Call = Callable[[Server, str, "str | None"], Awaitable[str]]
DENIED: dict[Call, str] = {
    rest: "PERMISSION_DENIED",
    jsonrpc: "-32041",
    over_grpc: "PERMISSION_DENIED",
}
CASES = [  # the caller's key, the tenant it names, may it without the policy, with it
    ("key-of-ann", "acme", True, True),
    ("key-of-ann", "globex", False, False),
    ("key-of-ann", None, True, True),
    ("key-of-max", "globex", True, True),
    ("key-of-max", "initech", True, False),
    ("key-of-sam", "anything", True, True),
]


@pytest.mark.parametrize("call", list(DENIED), ids=["rest", "jsonrpc", "grpc"])
async def test_a_caller_may_name_only_its_tenants(server: Server, policy: bool, call: Call) -> None:
    found = [await call(server, key, tenant) for key, tenant, *_ in CASES]
    allowed = [with_policy if policy else without for *_, without, with_policy in CASES]
    assert found == ["ok" if may else DENIED[call] for may in allowed]


def test_only_the_anonymous_caller_owns_what_anonymous_callers_made() -> None:
    assert ANONYMOUS.owner == ANONYMOUS_OWNER
    assert Principal("anonymous", scheme="apiKey").owner == "apiKey:anonymous"
    assert Principal("ann", scheme="apiKey", tenant="acme").owner == "apiKey:ann"
    with pytest.raises(ValueError, match="non-empty id"):
        Principal("", scheme="apiKey")
