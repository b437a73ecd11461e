"""A real MCP client (the official Python SDK) against `skills mcp`.

    python skills_client.py stdio MODE SKILLS_BINARY ROOT [EXTRA_ARG…]
    python skills_client.py http MODE URL TOKEN

MODE is `legacy` (initialize handshake) or `auto` (the SDK's default: probe
`server/discover`, protocol 2026-07-28 when the server has it). The script
lists and gets every skill through the Skills extension (`skills/list`,
`skills/get`: custom requests, the SDK has no helpers for them), reads every
file of every skill with `resources/read` and checks its size and sha256
digest against the manifest, reads the skill folders with
`resources/directory/read`, lists the fallback tools with their annotations
and calls them, and prints a JSON summary on standard output. Any failed
check raises (exit code 1).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
from typing import Any

import httpx2
import mcp_types as types
from pydantic import TypeAdapter

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ANY = TypeAdapter(dict[str, Any])


async def call(client: Client, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    request = types.Request[dict[str, Any] | None, str](method=method, params=params)
    return await client.session.send_request(request, ANY)


def file_bytes(contents: Any) -> bytes:
    if isinstance(contents, types.BlobResourceContents):
        return base64.b64decode(contents.blob)
    return contents.text.encode("utf-8")


async def exercise(client: Client) -> dict[str, Any]:
    summary: dict[str, Any] = {"protocol": client.protocol_version}
    caps = client.server_capabilities
    extensions = (caps.model_dump(by_alias=True).get("extensions") or {})
    skills_cap = extensions.get("io.modelcontextprotocol/skills")
    assert skills_cap == {"directoryRead": True}, extensions
    summary["instructions_bytes"] = len((client.instructions or "").encode("utf-8"))

    # skills/list, every page.
    skills: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        page = await call(client, "skills/list", {"cursor": cursor} if cursor else None)
        pages += 1
        skills.extend(page["skills"])
        cursor = page.get("nextCursor")
        if not cursor:
            break
        if pages > 1000:
            raise AssertionError("endless paging")
    summary["skills"] = [s["frontmatter"]["name"] for s in skills]
    summary["uris"] = [s["uri"] for s in skills]
    summary["pages"] = pages
    summary["cache_hints"] = "ttlMs" in page and "cacheScope" in page

    checked = 0
    blobs = 0
    for entry in skills:
        got = await call(client, "skills/get", {"uri": entry["uri"]})
        assert got["skill"] == entry, (got["skill"], entry)
        for file in entry["resources"]:
            result = await client.read_resource(file["uri"])
            contents = result.contents[0]
            if isinstance(contents, types.BlobResourceContents):
                blobs += 1
            data = file_bytes(contents)
            assert len(data) == file["size"], (file["uri"], len(data), file["size"])
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            assert digest == file["digest"], (file["uri"], digest, file["digest"])
            checked += 1
        # The skill's folder, and every folder of its manifest, as listed.
        root = entry["uri"].rsplit("/SKILL.md", 1)[0]
        folders = {root}
        for file in entry["resources"]:
            parts = file["uri"][len(root) + 1 :].split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folders.add(root + "/" + "/".join(parts[:depth]))
        for folder in sorted(folders):
            listing = await call(client, "resources/directory/read", {"uri": folder})
            assert listing["resources"], (folder, listing)
        listing = await call(client, "resources/directory/read", {"uri": root})
        names = {r["name"] for r in listing["resources"]}
        assert "SKILL.md" in names, listing
    summary["files_checked"] = checked
    summary["blobs"] = blobs

    # An unknown skill is -32602.
    try:
        await call(client, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"})
        raise AssertionError("skills/get of an unknown skill succeeded")
    except Exception as err:  # MCPError
        code = getattr(getattr(err, "error", None), "code", None)
        summary["unknown_skill_code"] = code

    # The fallback tools.
    tools = await client.list_tools()
    summary["tools"] = sorted(t.name for t in tools.tools)
    summary["annotations"] = {
        t.name: (t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None)
        for t in tools.tools
    }
    summary["titles"] = {t.name: t.title for t in tools.tools}
    first = summary["skills"][0]
    loaded = await client.call_tool("load_skill", {"name": first})
    assert not loaded.is_error, loaded
    summary["load_skill_chars"] = sum(len(c.text) for c in loaded.content if hasattr(c, "text"))
    missing = await client.call_tool("load_skill", {"name": "no-such-skill"})
    summary["load_unknown_is_error"] = bool(missing.is_error)
    # A skill with a Markdown file besides SKILL.md (read_skill_file reads text).
    with_file = next(
        (
            s
            for s in skills
            if any(f["uri"].endswith(".md") and not f["uri"].endswith("/SKILL.md") for f in s["resources"])
        ),
        None,
    )
    if with_file is not None:
        prefix = with_file["uri"].rsplit("SKILL.md", 1)[0]
        path = next(
            f["uri"][len(prefix):]
            for f in with_file["resources"]
            if f["uri"].endswith(".md") and not f["uri"].endswith("/SKILL.md")
        )
        read = await client.call_tool(
            "read_skill_file", {"skill": with_file["frontmatter"]["name"], "path": path}
        )
        summary["read_skill_file_is_error"] = bool(read.is_error)
    if "run_skill_command" in summary["tools"]:
        ran = await client.call_tool(
            "run_skill_command", {"skill": first, "command": "echo run-says-hello"}
        )
        text = "".join(c.text for c in ran.content if hasattr(c, "text"))
        summary["run_is_error"] = bool(ran.is_error)
        summary["run_output_seen"] = "run-says-hello" in text
    return summary


async def main() -> None:
    transport, mode = sys.argv[1], sys.argv[2]
    if transport == "stdio":
        binary, root = sys.argv[3], sys.argv[4]
        server: Any = StdioServerParameters(command=binary, args=["mcp", *sys.argv[5:], root])
    else:
        url, token = sys.argv[3], sys.argv[4]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        server = streamable_http_client(url, http_client=http)
    async with Client(server, mode=mode) as client:
        summary = await exercise(client)
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
