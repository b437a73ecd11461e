"""Measure `skills mcp` through the official MCP Python SDK.

    bash .ci/install-mcp-client
    cargo build --release -p skills-cli
    target/mcp-client-venv/bin/python scripts/mcp-bench.py target/release/skills examples/skills

Two figures, each with a baseline measured in the same run:

1. `skills/get` round trip for a cached skill over stdio (one client, one
   request at a time): the median of N calls after a warm-up call that
   builds the skill's manifest; baseline: `ping` round trips on the same
   session (the SDK's and the transport's own cost).
2. `resources/read` throughput over Streamable HTTP with 16 concurrent
   clients (16 sessions in one Python process, asyncio), reading the
   skills' files round-robin for a fixed time; baseline: `ping` throughput
   with the same 16 clients.

Both use the legacy handshake (protocol 2025-11-25), the path every MCP
client of today takes. Prints a JSON object.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ANY = TypeAdapter(dict[str, Any])
N = 1000
SECONDS = 10.0
CLIENTS = 16


async def call(client: Client, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    request = types.Request[dict[str, Any] | None, str](method=method, params=params)
    return await client.session.send_request(request, ANY)


async def round_trip(binary: str, root: str) -> dict[str, Any]:
    server = StdioServerParameters(command=binary, args=["mcp", root])
    async with Client(server, mode="legacy") as client:
        skills = (await call(client, "skills/list", None))["skills"]
        uri = skills[0]["uri"]
        await call(client, "skills/get", {"uri": uri})  # builds the manifest
        get_times, ping_times = [], []
        for _ in range(N):
            start = time.perf_counter()
            await call(client, "skills/get", {"uri": uri})
            get_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            await client.send_ping()
            ping_times.append(time.perf_counter() - start)
    get_median = statistics.median(get_times) * 1e6
    ping_median = statistics.median(ping_times) * 1e6
    return {
        "skills_get_median_us": round(get_median, 1),
        "skills_get_p90_us": round(statistics.quantiles(get_times, n=10)[-1] * 1e6, 1),
        "ping_median_us": round(ping_median, 1),
        "get_over_ping": round(get_median / ping_median, 2),
        "calls": N,
    }


async def worker(url: str, uris: list[str], op: str, deadline: float, offset: int) -> int:
    done = 0
    async with Client(url, mode="legacy") as client:
        i = offset
        while time.perf_counter() < deadline:
            if op == "read":
                await client.read_resource(uris[i % len(uris)])
            else:
                await client.send_ping()
            i += 1
            done += 1
    return done


async def throughput(binary: str, root: str) -> dict[str, Any]:
    proc = subprocess.Popen(
        [binary, "mcp", "--http", "127.0.0.1:0", root],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = next(w for w in line.split() if w.startswith("http://"))
        async with Client(url, mode="legacy") as client:
            skills = (await call(client, "skills/list", None))["skills"]
        uris = [f["uri"] for s in skills for f in s["resources"]]
        result: dict[str, Any] = {"clients": CLIENTS, "seconds": SECONDS, "files": len(uris)}
        for op in ("read", "ping"):
            start = time.perf_counter()
            deadline = start + SECONDS
            counts = await asyncio.gather(
                *(worker(url, uris, op, deadline, k) for k in range(CLIENTS))
            )
            elapsed = time.perf_counter() - start
            result[f"{op}_per_second"] = round(sum(counts) / elapsed, 1)
        result["read_over_ping"] = round(result["read_per_second"] / result["ping_per_second"], 2)
        return result
    finally:
        proc.terminate()
        proc.wait()


async def main() -> None:
    binary, root = sys.argv[1], sys.argv[2]
    out = {"round_trip_stdio": await round_trip(binary, root)}
    out["resources_read_http"] = await throughput(binary, root)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
