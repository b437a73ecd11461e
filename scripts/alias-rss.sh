#!/usr/bin/env bash
# Peak memory of `skills catalog` over ten alias-amplification SKILL.md files.
#
# Each SKILL.md has a ~64 KB frontmatter (just under the 64 KiB cap) that anchors
# one 34 000-byte scalar and refers to it 9 900 times (under the 10 000-node
# limit), so a parser that copies aliased nodes builds ~340 MB per file.
#
# Usage: [REFS=N] scripts/alias-rss.sh [SKILLS_BINARY] [WORK_DIR]
#   REFS           references per file (default 9900); REFS=28 stays just under
#                  the 1 MiB expansion budget, so the ten skills load
#   SKILLS_BINARY  default: target/release/skills (build it with
#                  `cargo build --release -p skills-cli`)
#   WORK_DIR       where the ten skill folders are written (default: a temp dir,
#                  removed afterwards)
# Prints the "Maximum resident set size" line of GNU time (`apt-get install time`).
set -euo pipefail

bin=${1:-target/release/skills}
if [[ $# -ge 2 ]]; then
    dir=$2
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "error: /usr/bin/time (GNU time) is missing: apt-get install -y time" >&2
    exit 2
fi

big=$(head -c 34000 /dev/zero | tr '\0' 'x')
refs=$(for _ in $(seq $((${REFS:-9900} - 1))); do printf '*a,'; done)
for i in $(seq 0 9); do
    mkdir -p "$dir/bomb-$i"
    {
        printf -- '---\nname: bomb-%s\ndescription: alias amplification\n' "$i"
        printf 'big: &a %s\n' "$big"
        printf 'copies: [%s*a]\n' "$refs"
        printf -- '---\nbody\n'
    } >"$dir/bomb-$i/SKILL.md"
done
echo "input: $(du -cb "$dir"/bomb-*/SKILL.md | tail -1 | cut -f1) bytes in 10 SKILL.md files"

# Refused bombs make `catalog` print an empty catalog; only the memory matters.
/usr/bin/time -v "$bin" catalog "$dir" >/dev/null 2>"$dir.time" || true
grep 'Maximum resident set size' "$dir.time"
rm -f "$dir.time"
