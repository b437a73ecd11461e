#!/usr/bin/env python3
"""Write crates/skills-cli/link/hot-text.ld: the functions `skills mcp` runs, placed together.

    SKILLS_LINK_LAYOUT=0 cargo build --profile profiling -p skills-cli
    python3 scripts/link-order.py target/profiling/skills [OUT]

Build without the layout (SKILLS_LINK_LAYOUT=0): valgrind does not tie the
functions of a binary linked with it to the binary (they show as `???`), so
callgrind would see almost none of them.

The linker script puts every function the MCP server runs (start-up, the
handshake, every kind of request over standard input and output and over
--http, errors, the change poll, shutdown) in one output section, `.text.hot`,
ahead of the rest of the code. The kernel maps an executable in 64 KiB
windows around each page fault, so the server's file-backed resident memory
is the number of windows its code touches: about 120 of the 157 in the
binary when that code is scattered by the compiler, about 45 when it is
together. crates/skills-cli/build.rs passes the script to the linker of
release builds on Linux.

How: the binary (built with symbols: the `profiling` profile has the release
code and keeps them) serves examples/skills under valgrind's callgrind, which
records every function that runs; where `perf` works, a second, native run
samples the functions that run on this machine's CPU but not on valgrind's
(SHA-NI, for one). Each name is written without its hash (`…17h*E`,
`Cs*_`), so the script still applies after the code, the compiler or the
build profile change (every release build hashes names differently); a
generic function then matches all its instances. A function the script does
not name stays where it was: a stale script costs memory, never correctness.

Requires valgrind (and optionally perf). Standard library only.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKILLS = ROOT / "examples" / "skills"
OUT = ROOT / "crates" / "skills-cli" / "link" / "hot-text.ld"

spec = importlib.util.spec_from_file_location("mcp_rss", ROOT / "scripts" / "mcp-rss.py")
mcp_rss = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mcp_rss)

# Rounds of REQUESTS under valgrind, and natively under perf (whose samples
# need many more to see the short functions).
ROUNDS = 20
PERF_ROUNDS = 300
# Fewer functions seen under callgrind than this means the workload did not
# run (the server runs about 3 300): nothing is written.
MIN_FUNCTIONS = 1_000
# Every request kind the server answers, and some it refuses.
REQUESTS = [
    ("ping", {}),
    ("tools/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("skills/list", {}),
    ("skills/get", {"uri": "skill://csv-insights/SKILL.md"}),
    ("resources/directory/read", {"uri": "skill://csv-insights/"}),
    ("resources/read", {"uri": "skill://csv-insights/SKILL.md"}),
    ("resources/read", {"uri": mcp_rss.URI}),
    ("resources/read", {"uri": "skill://csv-insights/assets/sample-orders.csv"}),
    ("resources/read", {"uri": "skill://nope/SKILL.md"}),
    ("tools/call", {"name": "load_skill", "arguments": {"name": "csv-insights"}}),
    ("tools/call", {"name": "load_skill", "arguments": {"name": "missing"}}),
    (
        "tools/call",
        {
            "name": "read_skill_file",
            "arguments": {"name": "csv-insights", "path": "references/interpreting-profiles.md"},
        },
    ),
    (
        "tools/call",
        {
            "name": "read_skill_file",
            "arguments": {
                "name": "csv-insights",
                "path": "references/interpreting-profiles.md",
                "start_line": 2,
                "end_line": 5,
            },
        },
    ),
    ("tools/call", {"name": "nope", "arguments": {}}),
    ("prompts/list", {}),
    ("unknown/method", {}),
]
# Long enough for the change poll (every 2 s) to run a few times.
POLL_WAIT = 4.5


def messages(rounds):
    n = 1
    for _ in range(rounds):
        for method, params in REQUESTS:
            yield {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
            n += 1


def serve_stdio(wrap, binary, rounds):
    p = subprocess.Popen(
        wrap + [binary, "mcp", str(SKILLS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": mcp_rss.INIT})
    p.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    p.stdin.write(b"{not json\n")
    p.stdin.flush()
    p.stdout.readline()
    for k, message in enumerate(messages(rounds)):
        send(message)
        while json.loads(p.stdout.readline()).get("id") != message["id"]:
            pass
        if k == 30:
            time.sleep(POLL_WAIT)
    p.stdin.close()
    p.wait()


def serve_http(wrap, binary, rounds):
    p = subprocess.Popen(
        wrap + [binary, "mcp", "--http", "0", str(SKILLS)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = mcp_rss.server_url(p)
    for session in range(2):
        client = mcp_rss.Http(url)
        client.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": mcp_rss.INIT})
        client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for k, message in enumerate(messages(rounds)):
            client.post(message)
            if k == 30 and session == 0:
                time.sleep(POLL_WAIT)
        client.conn.request("DELETE", client.path, headers={"mcp-session-id": client.session})
        client.conn.getresponse().read()
    p.terminate()
    p.wait()


def callgrind_names(path, binary):
    """Functions of `binary` that ran, from a callgrind file (names compressed as `(id) name`)."""
    objects, functions, names = {}, {}, set()
    current = None
    for line in open(path, errors="replace"):
        key, _, rest = line.rstrip("\n").partition("=")
        if key not in ("ob", "cob", "fn", "cfn"):
            continue
        m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
        table = objects if key in ("ob", "cob") else functions
        if m and m.group(2):
            table[m.group(1)] = m.group(2)
        value = table.get(m.group(1)) if m else rest
        if key == "ob":
            current = value
        elif key == "fn" and current == binary and value:
            # callgrind marks recursion levels as `name'2`.
            names.add(re.sub(r"'\d+$", "", value))
    return names


def perf_names(perf_data, binary):
    """Functions of `binary` in perf's samples."""
    out = subprocess.run(
        ["perf", "script", "-i", perf_data, "-F", "ip,sym,dso", "--no-demangle"],
        capture_output=True,
        text=True,
    ).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+ (\S+) \((.*)\)$", line)
        if m and m.group(2) == binary:
            names.add(m.group(1))
    return names


def generalize(name):
    """The name without what differs between builds: suffixes and hashes."""
    # Local copies get `.N` (and promoted ones `.llvm.N`) suffixes, numbered per build.
    name = re.sub(r"(\.llvm)?(\.\d+)+$", "", name)
    name = re.sub(r"17h[0-9a-f]{16}E$", "17h*E", name)
    name = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
    return name if name.endswith("*") else name + "*"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else OUT
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is needed")
    names = set()
    with tempfile.TemporaryDirectory() as tmp:
        for transport, serve in (("stdio", serve_stdio), ("http", serve_http)):
            trace = os.path.join(tmp, f"callgrind.{transport}")
            wrap = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={trace}"]
            serve(wrap, binary, ROUNDS)
            found = callgrind_names(trace, binary)
            print(f"callgrind, {transport}: {len(found)} functions", file=sys.stderr)
            if len(found) < MIN_FUNCTIONS:
                # A server that failed or was cut short under valgrind: a
                # script from it would leave most of the server scattered.
                sys.exit(
                    f"callgrind saw only {len(found)} functions over {transport} "
                    f"(at least {MIN_FUNCTIONS} expected); {out} is left as it was "
                    "(was the binary built with SKILLS_LINK_LAYOUT=0?)"
                )
            names |= found
        if shutil.which("perf"):
            for transport, serve in (("stdio", serve_stdio), ("http", serve_http)):
                data = os.path.join(tmp, f"perf.{transport}")
                wrap = ["perf", "record", "-q", "-F", "20000", "-e", "cpu-clock:u", "-o", data]
                try:
                    serve(wrap, binary, PERF_ROUNDS)
                    found = perf_names(data, binary)
                except OSError:
                    found = set()
                print(f"perf samples, {transport}: {len(found) - len(found & names)} more functions", file=sys.stderr)
                names |= found
    # Rust's symbols (`_ZN…`, `_R…`) and the C `main` that rustc writes; the
    # C code built into the binary stays where it is.
    patterns = sorted({generalize(n) for n in names if re.match(r"^(_ZN|_R)", n)})
    patterns.insert(0, "main")
    lines = [
        "/* Generated by scripts/link-order.py: the functions `skills mcp` runs, placed",
        "   together ahead of the rest of the code (see crates/skills-cli/build.rs).",
        "   Names without their hashes; regenerate after large changes to the server. */",
        "SECTIONS",
        "{",
        "  .text.hot : {",
        "    *(",
    ]
    for pattern in patterns:
        lines.append(f"      .text.{pattern}")
        lines.append(f"      .text.unlikely.{pattern}")
    lines += ["    )", "  }", "}", "INSERT BEFORE .text;", ""]
    out.write_text("\n".join(lines))
    print(f"{out}: {len(patterns)} patterns", file=sys.stderr)


if __name__ == "__main__":
    main()
