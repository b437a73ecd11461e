#!/usr/bin/env python3
"""Profile a CSV file: per-column types, missing values, ranges and top values.

Standard library only (Python 3.9+). Reads the file once, in a streaming way,
so large files are fine; distinct-value tracking is capped per column.

Usage:
    python3 profile_csv.py FILE [--delimiter D] [--max-rows N] [--top K]
                                [--format markdown|json]

Exit codes: 0 ok, 1 the file could not be read as CSV, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from datetime import datetime

DISTINCT_CAP = 10_000
MISSING_MARKERS = {"", "na", "n/a", "nan", "null", "none", "-", "?"}
TRUE_FALSE = {"true", "false", "yes", "no", "y", "n", "t", "f"}
INT_RE = re.compile(r"^[+-]?\d+$")
FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")


def parse_date(value: str) -> datetime | None:
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(value, fmt)
        except ValueError:
            continue
    return None


class Column:
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.missing = 0
        self.kinds = {"integer": 0, "float": 0, "boolean": 0, "date": 0, "text": 0}
        self.numbers: list[float] = []
        self.dates: list[datetime] = []
        self.freq: dict[str, int] = {}
        self.distinct_capped = False
        self.leading_zero = 0
        self.max_len = 0

    def add(self, raw: str) -> None:
        self.count += 1
        value = raw.strip()
        if value.lower() in MISSING_MARKERS:
            self.missing += 1
            return
        self.max_len = max(self.max_len, len(value))
        if value in self.freq:
            self.freq[value] += 1
        elif len(self.freq) < DISTINCT_CAP:
            self.freq[value] = 1
        else:
            self.distinct_capped = True

        if INT_RE.match(value):
            self.kinds["integer"] += 1
            if len(value.lstrip("+-")) > 1 and value.lstrip("+-").startswith("0"):
                self.leading_zero += 1
            self.numbers.append(float(value))
        elif FLOAT_RE.match(value):
            self.kinds["float"] += 1
            self.numbers.append(float(value))
        elif value.lower() in TRUE_FALSE:
            self.kinds["boolean"] += 1
        elif (parsed := parse_date(value)) is not None:
            self.kinds["date"] += 1
            self.dates.append(parsed)
        else:
            self.kinds["text"] += 1

    def inferred_type(self) -> str:
        present = self.count - self.missing
        if present == 0:
            return "empty"
        # Leading zeros (zip codes, ids) mean the column is an identifier, not a number.
        if self.leading_zero:
            return "text"
        numeric = self.kinds["integer"] + self.kinds["float"]
        for kind, hits in (("boolean", self.kinds["boolean"]), ("date", self.kinds["date"])):
            if hits == present:
                return kind
        if numeric == present:
            return "integer" if self.kinds["float"] == 0 else "float"
        if numeric >= 0.95 * present:
            return "mostly-numeric"
        return "text"

    def summary(self, top: int) -> dict:
        present = self.count - self.missing
        out: dict = {
            "name": self.name,
            "type": self.inferred_type(),
            "rows": self.count,
            "missing": self.missing,
            "missing_pct": round(100.0 * self.missing / self.count, 1) if self.count else 0.0,
            "distinct": len(self.freq),
            "distinct_capped": self.distinct_capped,
            "unique": present > 0 and len(self.freq) == present and not self.distinct_capped,
        }
        if out["type"] in ("integer", "float", "mostly-numeric") and self.numbers:
            nums = sorted(self.numbers)
            q1, median, q3 = quartiles(nums)
            iqr = q3 - q1
            low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
            out.update(
                min=nums[0],
                max=nums[-1],
                mean=round(statistics.fmean(nums), 4),
                median=median,
                stdev=round(statistics.pstdev(nums), 4) if len(nums) > 1 else 0.0,
                outliers=sum(1 for n in nums if n < low or n > high),
                non_numeric=present - len(nums),
            )
        elif out["type"] == "date" and self.dates:
            out.update(min=iso(min(self.dates)), max=iso(max(self.dates)))
        else:
            ranked = sorted(self.freq.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
            out["top"] = [{"value": v, "count": c} for v, c in ranked]
            out["max_length"] = self.max_len
        if self.leading_zero:
            out["note"] = f"{self.leading_zero} value(s) with leading zeros; treat as an identifier"
        return out


def iso(moment: datetime) -> str:
    if moment.time() == datetime.min.time():
        return moment.date().isoformat()
    return moment.isoformat()


def quartiles(nums: list[float]) -> tuple[float, float, float]:
    if len(nums) == 1:
        return nums[0], nums[0], nums[0]
    q = statistics.quantiles(nums, n=4, method="inclusive")
    return q[0], q[1], q[2]


def sniff_dialect(sample: str, delimiter: str | None) -> type[csv.Dialect] | csv.Dialect:
    if delimiter:
        class Given(csv.excel):
            pass

        Given.delimiter = delimiter
        return Given
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def profile(path: str, delimiter: str | None, max_rows: int | None, top: int) -> dict:
    # utf-8-sig drops a byte order mark, which spreadsheet exports often add.
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        sample = handle.read(64 * 1024)
        handle.seek(0)
        dialect = sniff_dialect(sample, delimiter)
        reader = csv.reader(handle, dialect)
        header = next(reader, None)
        if header is None:
            raise ValueError("file is empty")
        names = [h.strip() or f"column_{i + 1}" for i, h in enumerate(header)]
        columns = [Column(n) for n in names]
        rows = 0
        ragged = 0
        truncated = False
        for row in reader:
            if max_rows is not None and rows >= max_rows:
                truncated = True
                break
            if not row:
                continue
            rows += 1
            if len(row) != len(columns):
                ragged += 1
            for i, column in enumerate(columns):
                column.add(row[i] if i < len(row) else "")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    return {
        "file": path,
        "delimiter": dialect.delimiter,
        "rows": rows,
        "columns": len(columns),
        "ragged_rows": ragged,
        "duplicate_headers": duplicates,
        "truncated": truncated,
        "profile": [c.summary(top) for c in columns],
    }


def fmt(value) -> str:
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}"
    return str(value)


def to_markdown(report: dict) -> str:
    delim = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}.get(
        report["delimiter"], repr(report["delimiter"])
    )
    lines = [
        f"# Profile of `{report['file']}`",
        "",
        f"- Rows: {report['rows']}" + (" (stopped at --max-rows)" if report["truncated"] else ""),
        f"- Columns: {report['columns']}",
        f"- Delimiter: {delim}",
    ]
    if report["ragged_rows"]:
        lines.append(f"- Rows with a different field count than the header: {report['ragged_rows']}")
    if report["duplicate_headers"]:
        lines.append(f"- Duplicate column names: {', '.join(report['duplicate_headers'])}")
    lines += [
        "",
        "| column | type | missing | distinct | summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    for col in report["profile"]:
        if "mean" in col:
            summary = (
                f"min {fmt(col['min'])}, median {fmt(col['median'])}, max {fmt(col['max'])}, "
                f"mean {fmt(col['mean'])}, outliers {col['outliers']}"
            )
            if col["non_numeric"]:
                summary += f", non-numeric {col['non_numeric']}"
        elif col["type"] == "date":
            summary = f"{col['min']} .. {col['max']}"
        else:
            tops = ", ".join(f"{t['value']} ({t['count']})" for t in col.get("top", []))
            summary = f"top: {tops}" if tops else ""
        if col.get("unique"):
            summary = ("all values unique; " + summary).rstrip("; ")
        if "note" in col:
            summary += f"; {col['note']}"
        distinct = f"{col['distinct']}+" if col["distinct_capped"] else str(col["distinct"])
        summary = summary.replace("|", "\\|")
        lines.append(
            f"| {col['name']} | {col['type']} | {col['missing']} ({col['missing_pct']}%) "
            f"| {distinct} | {summary} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Profile the columns of a CSV file.")
    parser.add_argument("file", help="path to the CSV file")
    parser.add_argument("--delimiter", help="field delimiter (default: sniffed)")
    parser.add_argument("--max-rows", type=int, help="stop after this many data rows")
    parser.add_argument("--top", type=int, default=3, help="top values shown per text column")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = parser.parse_args(argv)
    if args.max_rows is not None and args.max_rows < 1:
        parser.error("--max-rows must be at least 1")
    try:
        report = profile(args.file, args.delimiter, args.max_rows, max(args.top, 0))
    except (OSError, ValueError, csv.Error) as err:
        print(f"profile_csv: {args.file}: {err}", file=sys.stderr)
        return 1
    if args.format == "json":
        text = json.dumps(report, indent=2, default=str) + "\n"
    else:
        text = to_markdown(report)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (e.g. `head`) went away; that is not an error for us.
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
