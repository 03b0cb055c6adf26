"""Calls execute with a progress callback through the Python `mcp` client.

Usage: progress_client.py stdio BINARY ARGS... | progress_client.py http URL

Sends one program with three capability calls of the demo catalog and
prints one JSON line: the progress notifications the callback heard
([progress, total, message] each) and the call's structured result.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

PROGRAM = """def main():
    found = records.lookup(key="al", limit=2)
    quote = shipping.quote(weight_grams=1200)
    status = records.status()
    return {"found": len(found["records"]), "price": quote["price_cents"], "count": status["count"]}
"""


async def run(streams):
    read, write = streams[0], streams[1]
    heard = []

    async def on_progress(progress, total, message):
        heard.append([progress, total, message])

    async with ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool(
            "execute", {"source": PROGRAM}, progress_callback=on_progress
        )
        # Notifications and the response travel in order; give the
        # callbacks a moment to have run.
        for _ in range(100):
            if len(heard) >= 3:
                break
            await asyncio.sleep(0.01)
        print(json.dumps({"progress": heard, "result": result.structured_content}))


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=sys.argv[3:])
        async with stdio_client(params) as streams:
            await run(streams)
    else:
        async with streamable_http_client(target) as streams:
            await run(streams)


asyncio.run(main())
