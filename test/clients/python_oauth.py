"""The official MCP Python SDK as a connector app: streamable_http_client with
its OAuthClientProvider against Sergo's /mcp, the whole flow — discovery,
registration (RFC 7591), PKCE, the browser consent (driven by the test), the
token, tool calls, a refresh, and what happens after the app is revoked.

Usage: python3 python_oauth.py MCP_URL QUERY
It talks to the test over stdio, one JSON object a line:
  out {"authorize": URL}      open this in the browser and consent
  out {"connected": {...}}    tools and a search, with the first token
  out {"refreshed": {...}}    a search after the SDK refreshed the token
  out {"revoke": true}        revoke the app now; answer with a line on stdin
  out {"done": {...}}         what a call after the revocation led to
"""

import asyncio
import json
import sys
import time
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


def say(message: dict) -> None:
    print(json.dumps(message), flush=True)


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """A loopback redirect endpoint, as a native app has (RFC 8252)."""

    def __init__(self) -> None:
        self.result: asyncio.Future[AuthorizationCodeResult] | None = None
        self.port = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode()
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        query = parse_qs(urlparse(line.split(" ")[1]).query)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 9\r\nconnection: close\r\n\r\nSigned in")
        await writer.drain()
        writer.close()
        if self.result is not None and not self.result.done():
            if "code" in query:
                self.result.set_result(
                    AuthorizationCodeResult(
                        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
                    )
                )
            else:
                self.result.set_exception(RuntimeError(f"authorization failed: {query}"))

    async def wait(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return await self.result


async def main(url: str, query: str) -> None:
    callback = Callback()
    await callback.start()
    storage = MemoryStorage()
    authorizations = 0
    finished = {"said": False}

    async def redirect_handler(authorization_url: str) -> None:
        nonlocal authorizations
        authorizations += 1
        if authorizations > 1:
            # After the revocation the SDK's refresh fails and it starts over: that is the answer.
            finished["said"] = True
            say({"done": {"error": "the server asked for sign-in again", "authorizations": authorizations}})
            raise RuntimeError("the server asked for sign-in again")
        callback.result = asyncio.get_running_loop().create_future()
        say({"authorize": authorization_url})

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK test app",
            redirect_uris=[f"http://127.0.0.1:{callback.port}/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback.wait,
    )

    async def search(session: ClientSession) -> dict:
        found = await session.call_tool("search", {"query": query, "limit": 4})
        return {"is_error": found.is_error, "text": found.content[0].text}

    async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                first = storage.tokens
                say({
                    "connected": {
                        "server": init.server_info.name,
                        "tools": [tool.name for tool in tools.tools],
                        "search": await search(session),
                        "client_id": storage.client.client_id if storage.client else None,
                    }
                })
                # The access token's time is up: the SDK refreshes it before the next call.
                provider.context.token_expiry_time = time.time() - 1
                result = await search(session)
                say({
                    "refreshed": {
                        "search": result,
                        "rotated": storage.tokens.refresh_token != first.refresh_token,
                        "new_access": storage.tokens.access_token != first.access_token,
                    }
                })
                say({"revoke": True})
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
                try:
                    after = await search(session)
                    say({"done": {"after": after}})
                except Exception as error:  # the call cannot be made: say why
                    if not finished["said"]:
                        say({"done": {"error": f"{type(error).__name__}: {error}", "authorizations": authorizations}})


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    except BaseException as error:
        # An exception group from the transport's task group after the final answer is expected.
        if not isinstance(error, (KeyboardInterrupt,)):
            print(f"exited: {type(error).__name__}", file=sys.stderr)
