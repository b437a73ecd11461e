#!/usr/bin/env python3
"""A deterministic stand-in for an OpenAI-compatible model, for trying
`skills eval` offline (docs/eval.md). Not a test fixture: a toy.

Trigger calls: the "model" loads the skill whose catalog description shares
the most words with the query (at least MIN_OVERLAP), else answers in text.
Output calls for csv-insights: it runs the profiler on the attached file,
saves the JSON to out/profile.json, then writes a short report from it.
A call whose system prompt is the grader's gets a verdict by keyword.

Usage: python3 examples/evals/fake_model.py [PORT]   (default 8788)
then:  OPENAI_BASE_URL=http://127.0.0.1:8788/v1 OPENAI_API_KEY=x skills eval ...
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIN_OVERLAP = 3
STOP = set("a an the and or of to for in on is are be it this that with when use user asks "
           "from by as at what do does my our me i you your".split())


def words(text):
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP and len(w) > 2}


def text_of(message):
    content = message.get("content") or ""
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def catalog(system):
    return re.findall(r'<skill name="([^"]+)">([^<]*)</skill>', system)


def pick(query, system):
    best, score = None, 0
    q = words(query)
    for name, description in catalog(system):
        overlap = len(q & (words(description) | words(name.replace("-", " "))))
        if overlap > score:
            best, score = name, overlap
    return best if score >= MIN_OVERLAP else None


def call(name, arguments):
    return {"tool_calls": [{"id": "call-1", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def answer(body):
    messages = body.get("messages", [])
    system = " ".join(text_of(m) for m in messages if m.get("role") == "system")
    if "You grade" in system:
        user = text_of(messages[-1])
        statement = user.split("<statement>")[-1]
        tag = re.search(r"<(answer-[0-9a-f]+)>", user)
        answer_text = ""
        if tag:
            answer_text = user.split(f"<{tag.group(1)}>")[-1].split(f"</{tag.group(1)}>")[0].lower()
        hits = sum(1 for w in words(statement) if w in answer_text)
        return {"content": json.dumps({"passed": hits >= 2, "evidence": f"{hits} of the statement's words appear in the answer"})}
    tools = [m for m in messages if m.get("role") == "tool"]
    query = next((text_of(m) for m in reversed(messages) if m.get("role") == "user"), "")
    if any(text_of(t).startswith("<skill name=\"csv-insights\"") for t in tools):
        # The csv-insights job, in three steps.
        runs = [t for t in tools if "exit_code" in text_of(t)]
        if not runs:
            return call("run_skill_command", {"skill": "csv-insights", "command":
                        "mkdir -p out && python3 scripts/profile_csv.py inputs/sample-orders.csv --format json > out/profile.json"})
        if len(runs) == 1:
            return call("run_skill_command", {"skill": "csv-insights", "command":
                        "python3 scripts/profile_csv.py inputs/sample-orders.csv"})
        table = json.loads(text_of(runs[-1])).get("stdout", "")
        notes = [line for line in table.splitlines() if line.startswith("| ") and "column" not in line]
        missing = [l.split("|")[1].strip() for l in notes if not re.search(r"\| 0 \(0\.0%\)", l)]
        zeros = [l.split("|")[1].strip() for l in notes if "leading zeros" in l]
        report = (f"Profile of sample-orders.csv: 10 rows, 8 columns.\n\n{table}\n\n"
                  f"Issues: missing values in {', '.join(missing) or 'none'}; "
                  f"leading zeros in {', '.join(zeros) or 'none'} (keep it as text).\n")
        if "region" in query.lower():
            report += "\nNorth ordered the most units, but one row has no region.\n"
        return {"content": report}
    if tools:
        return {"content": "Done."}
    skill = pick(query, system)
    if skill:
        return call("load_skill", {"name": skill})
    return {"content": "I can answer that without a skill."}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        reply = answer(body)
        usage = {"prompt_tokens": 1500, "completion_tokens": 40,
                 "prompt_tokens_details": {"cached_tokens": 1280}}
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            delta = {"role": "assistant"}
            if "content" in reply:
                delta["content"] = reply["content"]
            if "tool_calls" in reply:
                delta["tool_calls"] = [dict(c, index=0) for c in reply["tool_calls"]]
            finish = "tool_calls" if "tool_calls" in reply else "stop"
            for chunk in ({"choices": [{"index": 0, "delta": delta}]},
                          {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                          {"choices": [], "usage": usage}):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
        else:
            message = {"role": "assistant", "content": reply.get("content")}
            if "tool_calls" in reply:
                message["tool_calls"] = reply["tool_calls"]
            data = json.dumps({"choices": [{"index": 0, "message": message,
                                            "finish_reason": "tool_calls" if "tool_calls" in reply else "stop"}],
                               "usage": usage}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8788
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
