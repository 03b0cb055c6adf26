#!/usr/bin/env python3
"""A loopback JSON API that answers every request after a fixed delay.

The stand-in for a REST API in benches/capacity/run.sh: `GET /items/{id}`
answers `{"id": ID, "value": N}` after DELAY milliseconds, and
`GET /openapi.json` describes that one operation (operationId `getItem`),
so that `[[openapi]]` imports it as `api.get_item`. Plain asyncio, HTTP/1.1
with keep-alive, no dependencies.

Usage: api.py PORT DELAY_MS
"""

import asyncio
import json
import sys

PORT = int(sys.argv[1])
DELAY = int(sys.argv[2]) / 1000.0

SPEC = json.dumps({
    "openapi": "3.0.3",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": f"http://127.0.0.1:{PORT}"}],
    "paths": {
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "summary": "Get one item by its ID.",
                "parameters": [{
                    "name": "id", "in": "path", "required": True,
                    "schema": {"type": "integer"},
                }],
                "responses": {"200": {
                    "description": "The item.",
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "value": {"type": "integer"},
                        },
                    }}},
                }},
            },
        },
    },
}).encode()


def response(status, body):
    head = (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            path = parts[1] if len(parts) > 1 else ""
            length = 0
            for header in head.split(b"\r\n")[1:]:
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length:
                await reader.readexactly(length)
            if path == "/openapi.json":
                writer.write(response("200 OK", SPEC))
            elif path.startswith("/items/"):
                await asyncio.sleep(DELAY)
                item = path[len("/items/"):].split("?")[0]
                try:
                    n = int(item)
                except ValueError:
                    writer.write(response("400 Bad Request", b'{"error":"id"}'))
                else:
                    body = json.dumps({"id": n, "value": n * 7}).encode()
                    writer.write(response("200 OK", body))
            else:
                writer.write(response("404 Not Found", b'{"error":"path"}'))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", PORT, backlog=4096)
    async with server:
        await server.serve_forever()


asyncio.run(main())
