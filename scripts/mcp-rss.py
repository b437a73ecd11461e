#!/usr/bin/env python3
"""Resident memory of an MCP server over many requests (standard library only).

    python3 scripts/mcp-rss.py cli BINARY [DIR]          # `skills mcp`, stdio and --http
    python3 scripts/mcp-rss.py bench BENCH_SERVER [DIR]  # bench_server: ours and rmcp's

DIR defaults to examples/skills. `cli` starts `BINARY mcp DIR` (standard
input and output) and `BINARY mcp --http 0 DIR`; `bench` starts the two
servers of crates/skills-mcp/examples/bench_server.rs (`ours` and `rmcp`,
the same binary). Each server gets the MCP handshake, then REQUESTS
requests (default 100000) cycling through `resources/read`,
`resources/list`, `tools/list` and `tools/call load_skill` (`bench`: the
first two only, all rmcp's catalog serves), one at a time over HTTP and in
batches of 100 over stdio. Every answer is checked to be a
result, not an error.

Printed for each server, after the handshake and after each quarter of the
requests: VmRSS, split into RssAnon (the process's own memory) and RssFile
(pages of the binary and libraries mapped from the page cache), and VmHWM
(the peak); after the handshake and at the end, RssFile by mapped file. RssFile depends on the kernel as much as on the program: a
fault maps the whole page-cache folio around the touched page (128 KiB to
2 MiB on the kernels measured), so it follows the size and layout of the
binary's code more than the code a request runs.
"""

import http.client
import json
import re
import subprocess
import sys
import time
import urllib.parse

URI = "skill://csv-insights/references/interpreting-profiles.md"
SKILL = "csv-insights"
REQUESTS = 100_000
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "mcp-rss", "version": "1"},
}
METHODS = [
    ("resources/read", {"uri": URI}),
    ("resources/list", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "load_skill", "arguments": {"name": SKILL}}),
]
# rmcp's folder catalog serves resources only: `bench` asks both servers these.
RESOURCE_METHODS = METHODS[:2]


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    return fields


def files(pid):
    """RssFile by mapped file (smaps), largest first: the executable against the libraries."""
    rss, name = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+$", fields[0]):
                name = fields[5].rsplit("/", 1)[-1] if len(fields) > 5 and fields[5].startswith("/") else None
            elif fields[0] == "Rss:" and name:
                file_kib = rss.setdefault(name, [0, 0])
                file_kib[0] += int(fields[1])
            elif fields[0] == "Anonymous:" and name:
                rss[name][1] += int(fields[1])
    # Anonymous pages of a file mapping (relocated tables) count in RssAnon.
    ranked = sorted(((r - a, n) for n, (r, a) in rss.items()), reverse=True)
    return ", ".join(f"{n} {kib / 1024:.1f}" for kib, n in ranked if kib >= 64)


def show(label, pid, what, by_file=False):
    s = status(pid)
    print(
        f"  {label:<22} RSS {s['VmRSS']:5.1f} MiB = anon {s['RssAnon']:4.1f}"
        f" + file {s['RssFile']:4.1f}; peak {s['VmHWM']:5.1f} MiB  ({what})",
        flush=True,
    )
    if by_file:
        print(f"  {'':<22} file by mapping (MiB): {files(pid)}", flush=True)


def check(answer, method):
    if "result" not in answer:
        sys.exit(f"{method} failed: {json.dumps(answer)[:300]}")


def stdio(cmd, n):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())

    def recv():
        return json.loads(p.stdout.readline())

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    p.stdin.flush()
    check(recv(), "initialize")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    p.stdin.flush()
    time.sleep(0.2)
    show("after the handshake", p.pid, "stdio", by_file=True)
    done, started, batch = 0, time.time(), 100
    while done < n:
        for k in range(batch):
            method, params = METHODS[(done + k) % len(METHODS)]
            send({"jsonrpc": "2.0", "id": done + k + 1, "method": method, "params": params})
        p.stdin.flush()
        for k in range(batch):
            check(recv(), METHODS[(done + k) % len(METHODS)][0])
        done += batch
        if done % (n // 4) == 0:
            show(f"after {done} requests", p.pid, f"{time.time() - started:.1f} s", by_file=done == n)
    p.stdin.close()
    p.wait()


class Http:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.path = u.path
        self.conn = http.client.HTTPConnection(u.hostname, u.port)
        self.session = None

    def post(self, obj):
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if self.session:
            headers["mcp-session-id"] = self.session
        self.conn.request("POST", self.path, body=json.dumps(obj), headers=headers)
        r = self.conn.getresponse()
        body = r.read().decode()
        self.session = r.getheader("mcp-session-id") or self.session
        if "id" not in obj:
            return None
        if r.getheader("content-type", "").startswith("text/event-stream"):
            data = [l[5:].strip() for l in body.splitlines() if l.startswith("data:") and l[5:].strip()]
            return json.loads(data[-1])
        return json.loads(body)


def http_server(p, url, n, label, methods=METHODS):
    c = Http(url)
    check(c.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}), "initialize")
    c.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    time.sleep(0.2)
    show("after the handshake", p.pid, label, by_file=True)
    started = time.time()
    for i in range(n):
        method, params = methods[i % len(methods)]
        check(c.post({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params}), method)
        if (i + 1) % (n // 4) == 0:
            show(f"after {i + 1} requests", p.pid, f"{time.time() - started:.1f} s", by_file=i + 1 == n)


def server_url(p):
    """The URL `skills mcp --http` prints on its standard error (a pipe)."""
    while True:
        line = p.stderr.readline().decode()
        if not line:
            sys.exit("the server ended before printing its address")
        m = re.search(r"(http://[0-9.:]+/mcp)", line)
        if m:
            return m.group(1)


def cli_http(binary, root, n):
    p = subprocess.Popen([binary, "mcp", "--http", "0", root], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        http_server(p, server_url(p), n, "--http")
    finally:
        p.terminate()
        p.wait()


def bench(binary, which, root, n):
    p = subprocess.Popen([binary, which, root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        url = p.stdout.readline().decode().strip()
        http_server(p, url, n, which, RESOURCE_METHODS)
    finally:
        p.stdin.close()
        p.wait()


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("cli", "bench"):
        sys.exit(__doc__)
    mode, binary = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else "examples/skills"
    n = int(__import__("os").environ.get("REQUESTS", REQUESTS))
    if mode == "cli":
        print(f"{binary} mcp {root} (stdio)")
        stdio([binary, "mcp", root], n)
        print(f"{binary} mcp --http 0 {root}")
        cli_http(binary, root, n)
    else:
        for which in ("ours", "rmcp"):
            print(f"{binary} {which} {root}")
            bench(binary, which, root, n)


if __name__ == "__main__":
    main()
