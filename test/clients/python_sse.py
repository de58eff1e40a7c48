"""The official MCP Python SDK's sse_client against Sergo's /sse, as Sagewai's
McpClient.connect_sse uses it: lists the tools, searches, reads a page.

Usage: python3 python_sse.py URL KEY QUERY   (prints one JSON object)
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.sse import sse_client


async def main(url: str, key: str, query: str) -> None:
    out: dict = {}
    async with sse_client(url, headers={"Authorization": f"Bearer {key}"}) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["protocol"] = init.protocol_version
            tools = await session.list_tools()
            out["tools"] = [tool.name for tool in tools.tools]
            found = await session.call_tool("search", {"query": query, "limit": 4})
            out["search"] = {"is_error": found.is_error, "text": found.content[0].text}
            other = await session.call_tool("read_document", {"document_id": "nope0000"})
            out["missing"] = {"is_error": other.is_error, "text": other.content[0].text}
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
