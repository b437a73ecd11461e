"""One step of trpc-agent-python's agent loop, on the script of the
`loop_step_20_messages_10_tools` group of `benches/agent.rs`.

Not part of CI or of `cargo bench`: it is the other side of a comparison
published in docs/benchmarks.md ("One step of the agent loop"). Rerun with:

    python3 -m venv /tmp/trpc-venv
    /tmp/trpc-venv/bin/pip install trpc-agent-py==1.2.0 greenlet   # 1.2.0 needs greenlet and does not declare it
    /tmp/trpc-venv/bin/python crates/skills-agent/benches/trpc_step.py

What one timed iteration does, as the Rust bench does with `Runner::run_to_end`
on a `Session` resumed from the same kind of transcript: `Runner.run_async`
with a new user message on a session (in trpc's `InMemorySessionService`)
that already holds 20 events (five turns of user message, `load_skill` call,
its ~3 KB result, answer), on an `LlmAgent` whose instruction carries a
catalog of 50 skills (~300-character descriptions) and that has 12 function
tools (`load_skill`, `read_skill_file`, `tool_00`..`tool_09`); every event
the run yields is consumed. The model answers at once, from a script:

  text            one model call that answers "All done; tell me if you
                  need more." (`runner_step` in the Rust bench);
  tool_then_text  a call of `tool_00` with {"x": "release notes"}, the tool
                  runs (it returns "ok: release notes"), then the same text
                  (`runner_tool_call_then_answer`): two model calls.

The session is made (and deleted) outside the timing, as the Rust bench
resumes (and drops) its session outside the timing. Times come from
`time.perf_counter_ns`, after a warm-up; median and mean per run, and per
step (the run divided by its model calls); the process CPU time of a run
too (`time.process_time_ns`: on a loaded machine a run of milliseconds is
often preempted, which shows in the wall time only). `get_session` alone is timed too:
trpc's runner reads (deep-copies) the session from its service on every run,
which the Rust runner, handed the `&mut Session`, does not do.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import time
import uuid
from typing import AsyncGenerator, List

from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.events import Event
from trpc_agent_sdk.models import LLMModel, LlmRequest, LlmResponse
from trpc_agent_sdk.runners import Runner
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.tools import FunctionTool
from trpc_agent_sdk.types import Content, FunctionCall, FunctionResponse, Part

ANSWER = "All done; tell me if you need more."
WORDS = ("review the release notes before publishing check every migration for locks and "
         "rollback steps when user asks about tests that fail intermittently in continuous "
         "integration with clear examples").split()
APP, USER = "bench", "user"


class Lcg:
    """The deterministic generator of skills-testkit (same constants)."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return self.state >> 33


def words(rng: Lcg, length: int) -> str:
    """Words until the text is about `length` bytes long, then a period."""
    out: list[str] = []
    size = 0
    while size < length:
        word = WORDS[rng.next() % len(WORDS)]
        out.append(word)
        size += len(word) + 1
    return " ".join(out) + "."


class ScriptedModel(LLMModel):
    """Answers at once: text, or (tool_then_text) a `tool_00` call unless the
    last content is a function response."""

    def __init__(self, script: str) -> None:
        super().__init__(model_name=f"bench-{script}")
        self.script = script

    @classmethod
    def supported_models(cls) -> List[str]:
        return [r"bench-.*"]

    async def _generate_async_impl(self, request: LlmRequest, stream: bool = False,
                                   ctx=None) -> AsyncGenerator[LlmResponse, None]:
        last = request.contents[-1] if request.contents else None
        after_tool = last is not None and any(p.function_response for p in (last.parts or []))
        if self.script == "tool_then_text" and not after_tool:
            part = Part(function_call=FunctionCall(id="call_bench", name="tool_00",
                                                   args={"x": "release notes"}))
        else:
            part = Part(text=ANSWER)
        yield LlmResponse(content=Content(role="model", parts=[part]), partial=False, turn_complete=True)


def user_tool(i: int):

    def tool(x: str) -> str:
        """Does one thing for the user."""
        return f"ok: {x}"

    tool.__name__ = tool.__qualname__ = f"tool_{i:02}"
    return tool


def load_skill(name: str) -> str:
    """Loads a skill's instructions by name."""
    return f"<skill name=\"{name}\">...</skill>"


def read_skill_file(skill: str, path: str) -> str:
    """Reads a file of a loaded skill."""
    return f"{skill}/{path}"


def agent(script: str) -> LlmAgent:
    rng = Lcg(11)
    catalog = ["<available_skills>"]
    for i in range(50):
        description = words(rng, 300)
        catalog.append(f"<skill><name>skill-{i:02}</name><description>{description}</description></skill>")
    catalog.append("</available_skills>")
    instruction = "You are a helpful engineering assistant.\n\n" + "\n".join(catalog)
    tools = [FunctionTool(load_skill), FunctionTool(read_skill_file)]
    tools += [FunctionTool(user_tool(i)) for i in range(10)]
    return LlmAgent(name="bench", model=ScriptedModel(script), instruction=instruction, tools=tools)


def history() -> list[Event]:
    """20 events: five turns of user, load_skill call, result, answer."""
    rng = Lcg(7)
    events: list[Event] = []
    for turn in range(5):
        body = "".join(f"## Step {s}\n\n{words(rng, 700)}\n\n" for s in range(1, 5))
        call_id = f"call_{turn}"
        name = f"skill-{turn:02}"
        events.append(Event(invocation_id=f"inv{turn}", author="user",
                            content=Content(role="user", parts=[Part(text=words(rng, 200))])))
        events.append(Event(invocation_id=f"inv{turn}", author="bench", branch="bench",
                            content=Content(role="model", parts=[
                                Part(function_call=FunctionCall(id=call_id, name="load_skill", args={"name": name}))
                            ])))
        events.append(Event(invocation_id=f"inv{turn}", author="bench", branch="bench",
                            content=Content(role="user", parts=[
                                Part(function_response=FunctionResponse(
                                    id=call_id, name="load_skill",
                                    response={"result": f"<skill name=\"{name}\">\n{body}</skill>"}))
                            ])))
        events.append(Event(invocation_id=f"inv{turn}", author="bench", branch="bench",
                            content=Content(role="model", parts=[Part(text=words(rng, 300))])))
    return events


async def fresh(service: InMemorySessionService, events: list[Event]) -> str:
    session_id = uuid.uuid4().hex
    session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for event in events:
        await service.append_event(session=session, event=event.model_copy(deep=True))
    return session_id


async def bench(script: str, iterations: int, warmup: int) -> dict:
    service = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent(script), session_service=service)
    events = history()
    question = Content(role="user", parts=[Part(text=words(Lcg(7), 200))])
    steps = 2 if script == "tool_then_text" else 1
    times: list[int] = []
    cpus: list[int] = []
    gets: list[int] = []
    for i in range(warmup + iterations):
        session_id = await fresh(service, events)
        start = time.perf_counter_ns()
        cpu_start = time.process_time_ns()
        last = None
        count = 0
        async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=question):
            last = event
            count += 1
        elapsed = time.perf_counter_ns() - start
        cpu = time.process_time_ns() - cpu_start
        # The run must have followed the script.
        assert last is not None and last.content.parts[0].text == ANSWER, last
        stored = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        assert len(stored.events) == 20 + 1 + 2 * steps - 1, len(stored.events)
        if steps == 2:
            response = stored.events[22].content.parts[0].function_response
            assert response is not None and response.response == {"result": "ok: release notes"}, response
        start = time.perf_counter_ns()
        await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        get_elapsed = time.perf_counter_ns() - start
        await service.delete_session(app_name=APP, user_id=USER, session_id=session_id)
        if i >= warmup:
            times.append(elapsed)
            cpus.append(cpu)
            gets.append(get_elapsed)
    await runner.close()
    return {
        "script": script,
        "steps": steps,
        "events_per_run": count,
        "median_us": statistics.median(times) / 1000,
        "mean_us": statistics.fmean(times) / 1000,
        "median_per_step_us": statistics.median(times) / 1000 / steps,
        "mean_per_step_us": statistics.fmean(times) / 1000 / steps,
        "cpu_median_us": statistics.median(cpus) / 1000,
        "get_session_median_us": statistics.median(gets) / 1000,
    }


async def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    warmup = max(iterations // 10, 50)
    for script in ("text", "tool_then_text"):
        r = await bench(script, iterations, warmup)
        print(f"{r['script']:>15}: {r['steps']} model call(s), {r['events_per_run']} events; "
              f"run median {r['median_us']:.1f} us, mean {r['mean_us']:.1f} us; "
              f"per step median {r['median_per_step_us']:.1f} us, mean {r['mean_per_step_us']:.1f} us; "
              f"process CPU time per run median {r['cpu_median_us']:.1f} us; "
              f"get_session alone (20+ events) median {r['get_session_median_us']:.1f} us "
              f"({iterations} runs after {warmup} warm-up)")


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    asyncio.run(main())
