#!/usr/bin/env python3
"""Write crates/skills-cli/link/hot-text.ld: the functions `skills mcp` runs, placed together.

    SKILLS_LINK_LAYOUT=0 SKILLS_LINK_MAP=/tmp/skills.map cargo build --release -p skills-cli
    python3 scripts/link-order.py target/release/skills /tmp/skills.map [OUT]

The release build itself, linked without the layout (SKILLS_LINK_LAYOUT=0:
valgrind does not tie the functions of a binary linked with it to the
binary) and with the linker's map, which names the function at each address
of the stripped binary. Any other build would not do: the optimizer merges
identical functions and keeps one copy under the name of any of them, and
which one differs between builds of different settings (a build with
symbols or line tables is one).

The linker script puts every function the MCP server runs (start-up, the
handshake, every kind of request over standard input and output and over
--http, errors, the change poll, shutdown) in one output section, `.text.hot`,
ahead of the rest of the code: first the functions it runs once serving
(after the first request of each kind), then those only its start-up runs.
The server drops its mappings of code every 2 s
(`skills_sandbox::code_pages`), so what it keeps resident is the first
group. The kernel maps an executable in 64 KiB windows around each page
fault, so the server's file-backed resident memory is the number of windows
its code touches: about 120 of the 157 in the binary when that code is
scattered by the compiler, about 30 when it is together (20 of them the
serving code). crates/skills-cli/build.rs passes the script to the linker
of release builds on Linux.

How: the binary serves examples/skills under valgrind's callgrind, which
records the address of every instruction that runs; where `perf` works, a
second, native run samples the functions that run on this machine's CPU but
not on valgrind's (SHA-NI, for one). The map (LLD's format: rustc links
with LLD on x86-64 Linux) turns addresses into names. The build uses
Rust's v0 symbol names (.cargo/config.toml), which spell out each generic
function's instance; each name is written without what differs between
builds (a crate's disambiguator `Cs*_`, back-references `B*_`, the crate
that instantiated a generic function, legacy hashes `…17h*E`), so the
script still applies after the code, the compiler or the build profile
change. Built with legacy names (`RUSTFLAGS` in the environment replace
the config), a name would match every instance of a generic function. A
function the script does not name stays where it was: a stale script costs
memory, never correctness.

Requires valgrind (and optionally perf). Standard library only.
"""

import bisect
import importlib.util
import json
import os
import re
import shutil
import struct
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


def serve_stdio(wrap, binary, rounds, started=lambda pid: None):
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
        if k == len(REQUESTS) - 1:
            started(p.pid)
        if k == 30:
            time.sleep(POLL_WAIT)
    p.stdin.close()
    p.wait()


def serve_http(wrap, binary, rounds, started=lambda pid: None):
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
            if k == len(REQUESTS) - 1 and session == 0:
                started(p.pid)
            if k == 30 and session == 0:
                time.sleep(POLL_WAIT)
        client.conn.request("DELETE", client.path, headers={"mcp-session-id": client.session})
        client.conn.getresponse().read()
    p.terminate()
    p.wait()


class Sections:
    """The functions of the binary by address, from LLD's map of its link."""

    def __init__(self, path):
        rows, output = [], None
        for line in open(path, errors="replace"):
            fields = line.split()
            if not fields:
                continue
            # LLD: `VMA LMA SIZE ALIGN OUT` (an output section, little indent),
            # then `VMA LMA SIZE ALIGN FILE:(SECTION)`.
            if len(fields) == 5 and fields[4].startswith(".") and len(line) - len(line.lstrip()) < 20:
                output = fields[4]
                continue
            m = re.search(r":\((\.text\.(?:unlikely\.|hot\.)?)(.+)\)$", line)
            if len(fields) == 5 and output and output.startswith(".text") and m:
                try:
                    rows.append((int(fields[0], 16), int(fields[2], 16), m.group(2)))
                except ValueError:
                    continue
        rows.sort()
        self.rows = rows
        self.starts = [r[0] for r in rows]
        if len(rows) < MIN_FUNCTIONS:
            sys.exit(f"{path}: {len(rows)} functions; is it LLD's map of the release build?")

    def name(self, address):
        i = bisect.bisect_right(self.starts, address) - 1
        if i >= 0 and address < self.rows[i][0] + max(self.rows[i][1], 1):
            return self.rows[i][2]
        return None


def elf_loads(binary):
    """The PT_LOAD segments of a 64-bit little-endian ELF file: (file offset, address, size)."""
    with open(binary, "rb") as f:
        head = f.read(64)
        if head[:6] != b"\x7fELF\x02\x01":
            sys.exit(f"{binary}: not a 64-bit little-endian ELF file")
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    loads = []
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if kind == 1:
            loads.append((offset, vaddr, filesz))
    return loads


def callgrind_addresses(path, binary):
    """Addresses of the instructions of `binary` that ran, from a callgrind file
    written with `--dump-instr=yes` (addresses relative to each object).

    Every line that gives a position (a cost line, the target of a call) gives
    it in full (`0x…`), relative to the position before it (`+N`, `-N`) or as
    the same (`*`); names are compressed as `(id) name`."""
    objects, addresses = {}, set()
    current, last = None, 0

    def position(token):
        nonlocal last
        if token.startswith("0x"):
            last = int(token, 16)
        elif token[0] in "+-":
            last += int(token)
        return last

    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        if line[0] in "0123456789+-*":
            address = position(line.split()[0])
            if current == binary:
                addresses.add(address)
            continue
        key, _, rest = line.partition("=")
        if key == "calls":
            position(rest.split()[1])
        elif key in ("ob", "cob"):
            m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
            if m and m.group(2):
                objects[m.group(1)] = m.group(2)
            if key == "ob":
                current = objects.get(m.group(1)) if m else rest
    return addresses


def perf_addresses(perf_data, binary):
    """Addresses in `binary` (as linked) of perf's samples in it."""
    out = subprocess.run(
        ["perf", "script", "-i", perf_data, "--show-mmap-events", "-F", "ip,dso"],
        capture_output=True,
        text=True,
    ).stdout
    maps, addresses, loads = [], set(), elf_loads(binary)
    for line in out.splitlines():
        # PERF_RECORD_MMAP2 PID/TID: [START(LENGTH) @ OFFSET ...]: r-xp PATH
        m = re.search(r"MMAP2? .*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+)\b.*\]: \S+ (.+)$", line)
        if m:
            if m.group(4) == binary:
                maps.append(tuple(int(g, 16) for g in m.groups()[:3]))
            continue
        m = re.match(r"\s*([0-9a-f]+) \((.*)\)$", line)
        if not m or m.group(2) != binary:
            continue
        ip = int(m.group(1), 16)
        for start, length, offset in maps:
            if start <= ip < start + length:
                file_offset = ip - start + offset
                for seg_offset, vaddr, size in loads:
                    if seg_offset <= file_offset < seg_offset + size:
                        addresses.add(file_offset - seg_offset + vaddr)
    return addresses


def dump_callgrind(pid):
    """Has callgrind write what ran so far (to OUT.1) and start counting again."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)


def without_instantiating_crate(name):
    """A v0 name without the crate at its end (`Cs*_6skills`, `C6skills`, `B*_`), if any.

    A crate is `C`, an optional disambiguator, and its name with the name's
    length first: the length tells the crate ending the symbol from a path
    ending in a crate's item (`Cs*_6skills4main`).
    """
    if name.endswith("B*_"):
        return name[: -len("B*_")]
    for m in re.finditer(r"C(?:s\*_)?([0-9]+)", name):
        rest = name[m.end() :]
        if len(rest) == int(m.group(1)) and re.fullmatch(r"[A-Za-z_][0-9A-Za-z_]*", rest):
            return name[: m.start()]
    return name


def generalize(name):
    """The name without what differs between builds: suffixes and hashes."""
    # Local copies get `.N` (and promoted ones `.llvm.N`) suffixes, numbered per build.
    name = re.sub(r"(\.llvm)?(\.\d+)+$", "", name)
    name = re.sub(r"17h[0-9a-f]{16}E$", "17h*E", name)
    name = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
    # v0 back-references are byte offsets into the name: they move when a
    # crate's disambiguator has another length.
    name = re.sub(r"B[0-9A-Za-z]*_", "B*_", name)
    # A generic instance ends with the crate that instantiated it: each crate
    # that uses an instance has its own copy, and which copies the optimizer
    # keeps differs between builds; identical copies are also merged into
    # one, kept under the name of any of them.
    if name.startswith("_R"):
        name = without_instantiating_crate(name)
    return name if name.endswith("*") else name + "*"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    sections = Sections(sys.argv[2])
    out = Path(sys.argv[3]) if len(sys.argv) > 3 else OUT

    def named(addresses, what):
        names = {sections.name(a) for a in addresses}
        unknown = len([a for a in addresses if sections.name(a) is None])
        if unknown > len(addresses) // 10:
            # The map is of another build, or callgrind placed the binary elsewhere.
            sys.exit(f"{what}: {unknown} of {len(addresses)} addresses are in no function of the map")
        return names - {None}

    if shutil.which("valgrind") is None:
        sys.exit("valgrind is needed")
    names, serving = set(), set()
    with tempfile.TemporaryDirectory() as tmp:
        for transport, serve in (("stdio", serve_stdio), ("http", serve_http)):
            trace = os.path.join(tmp, f"callgrind.{transport}")
            wrap = ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={trace}"]
            # Once every kind of request has been answered once, callgrind
            # writes what ran so far to TRACE.1 and the rest to TRACE.
            serve(wrap, binary, ROUNDS, started=dump_callgrind)
            if not os.path.exists(trace + ".1"):
                sys.exit(f"callgrind wrote no dump at the end of start-up over {transport}")
            steady = named(callgrind_addresses(trace, binary), f"callgrind, {transport}")
            found = named(callgrind_addresses(trace + ".1", binary), f"callgrind, {transport}") | steady
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
            serving |= steady
        if shutil.which("perf"):
            for transport, serve in (("stdio", serve_stdio), ("http", serve_http)):
                data = os.path.join(tmp, f"perf.{transport}")
                wrap = ["perf", "record", "-q", "-F", "20000", "-e", "cpu-clock:u", "-o", data]
                try:
                    serve(wrap, binary, PERF_ROUNDS)
                    found = named(perf_addresses(data, binary), f"perf, {transport}")
                except OSError:
                    found = set()
                print(f"perf samples, {transport}: {len(found) - len(found & names)} more functions", file=sys.stderr)
                names |= found
                # Sampled over the whole run: counted with the serving code.
                serving |= found
    # Rust's symbols (`_ZN…`, `_R…`), the C `main` that rustc writes, and the
    # C functions built into the binary (the compiler's built-ins, C
    # libraries built with a section per function).
    rust = lambda group: {generalize(n) for n in group if re.match(r"^[A-Za-z_][A-Za-z0-9_.$]*$", n)}
    serving_patterns = sorted(rust(serving))
    start_patterns = sorted(rust(names) - set(serving_patterns))
    if "main*" not in serving_patterns and "main*" not in start_patterns:
        start_patterns.insert(0, "main")
    lines = [
        "/* Generated by scripts/link-order.py: the functions `skills mcp` runs, placed",
        "   together ahead of the rest of the code (see crates/skills-cli/build.rs).",
        "   v0 symbol names without what differs between builds; regenerate after large",
        "   changes to the server. */",
        "SECTIONS",
        "{",
        "  .text.hot : {",
    ]
    for comment, group in (
        ("What the server runs while serving", serving_patterns),
        ("What only its start-up runs", start_patterns),
    ):
        lines += [f"    /* {comment}. */", "    *("]
        for pattern in group:
            lines.append(f"      .text.{pattern}")
            lines.append(f"      .text.unlikely.{pattern}")
        lines.append("    )")
    lines += ["  }", "}", "INSERT BEFORE .text;", ""]
    out.write_text("\n".join(lines))
    print(
        f"{out}: {len(serving_patterns)} patterns while serving, {len(start_patterns)} at start-up",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
