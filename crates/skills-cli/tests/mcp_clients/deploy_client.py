"""A real MCP client (the official Python SDK) against a `skills mcp --http
--run container` replica, or the load balancer in front of replicas.

    python deploy_client.py URL TOKEN MODE SESSIONS

MODE is `legacy` (the `initialize` handshake: a session, held by one
replica) or `auto` (protocol 2026-07-28: every request stands alone).
SESSIONS client sessions are opened one after the other; each lists the
skills and the tools, then runs two commands with `run_skill_command`: the
first says where it runs (host name, user id, whether the host's
/etc/os-release is there) and leaves a file in the workspace, the second
reads that file back. Prints a JSON summary on standard output; any failed
step raises (exit code 1).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from typing import Any

import httpx2
import mcp_types as types
from pydantic import TypeAdapter

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ANY = TypeAdapter(dict[str, Any])

PROBE = (
    'echo "where: host=$(hostname) uid=$(id -u) '
    'os-release=$(test -e /etc/os-release && echo yes || echo no)"; '
    'echo "$SKILL_NAME-kept" > "$WORK_DIR/marker"'
)
READ_BACK = 'echo "marker: $(cat "$WORK_DIR/marker" 2>/dev/null || echo none)"'


async def run(client: Client, skill: str, command: str) -> str:
    """Runs `command` with `run_skill_command`; its standard output."""
    result = await client.call_tool("run_skill_command", {"skill": skill, "command": command})
    text = "".join(c.text for c in result.content if hasattr(c, "text"))
    assert not result.is_error, text
    answer = json.loads(text)
    assert answer["exit_code"] == 0, answer
    return answer["stdout"]


def field(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if prefix in line:
            return line.split(prefix, 1)[1].strip()
    raise AssertionError(f"no {prefix!r} in {text!r}")


async def one_session(url: str, token: str, mode: str) -> dict[str, Any]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        request = types.Request[dict[str, Any] | None, str](method="skills/list", params=None)
        listing = await client.session.send_request(request, ANY)
        skills = sorted(s["frontmatter"]["name"] for s in listing["skills"])
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        assert "run_skill_command" in tools, tools
        skill = skills[0]
        where = field(await run(client, skill, PROBE), "where:")
        marker = field(await run(client, skill, READ_BACK), "marker:")
        return {
            "protocol": client.protocol_version,
            "skills": skills,
            "tools": tools,
            "where": dict(kv.split("=", 1) for kv in where.split()),
            "marker": marker,
        }


async def main() -> None:
    url, token, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sessions = [await one_session(url, token, mode) for _ in range(count)]
    print(json.dumps({"host": socket.gethostname(), "sessions": sessions}, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
