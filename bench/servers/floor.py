"""The floor: a bare ASGI app that parses the JSON-RPC body and writes a fixed reply."""

import json

CARD = json.dumps({"name": "Floor", "version": "1.0.0", "capabilities": {}}).encode()
RESULT = (
    b'{"kind":"message","messageId":"m-1","role":"agent","parts":[{"kind":"text","text":"hi"}]}'
)


async def app(scope, receive, send):
    """Answer GET with a fixed card and POST with a JSON-RPC result carrying the request's id."""
    if scope["type"] != "http":
        return
    if scope["method"] == "GET":
        await _reply(send, CARD)
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    call = json.loads(body)
    reply = b'{"jsonrpc":"2.0","id":' + json.dumps(call["id"]).encode() + b',"result":' + RESULT
    await _reply(send, reply + b"}")


async def _reply(send, body):
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
