//! The scripted conversation behind the prefix-stability measurement.
//!
//! Shared by the example (`examples/prefix_stability/main.rs`, which prints
//! the tables) and the test (`tests/prefix_stability.rs`, which asserts the
//! invariants), so both measure exactly the same requests.
//!
//! The script is written once, with the default surface's tools
//! (`load_skill`, `read_skill_file`); [`on_surface`] spells each call for the
//! trpc surface (`skill_load`, `skill_select_docs`), where the turn-6 load
//! brings a doc with the body. A run takes one surface. Two agents sit over
//! one provider (a [`SwappableProvider`], so a skill can appear
//! mid-session): the default mode ([`Materialization::ToolResult`]) and the
//! legacy mode ([`Materialization::SystemMessage`]). Every scripted action is
//! applied to both sessions in lockstep, and every model call is a
//! [`Session::build_request`] encoded with [`wire::openai_chat`].

// The example and the test each use a different subset of this module.
#![allow(dead_code)]

use std::fmt;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use skills_agent::{Agent, Dispatch, Materialization, Message, Session, Surface, ToolCall};
use skills_core::{
    InCodeProvider, InCodeSkill, SkillProvider, SwappableProvider, TokenCounter, define_skill,
};
use skills_models::wire;
use tiktoken_rs::CoreBPE;

/// The model name written into every request body.
pub(crate) const MODEL: &str = "gpt-4o";

/// The agents' own instructions (the start of the stable system block).
pub(crate) const INSTRUCTIONS: &str = "You are the engineering assistant of a small software \
team. Answer concisely, put commands and code in fenced blocks, and say so when you are not \
sure of something.";

// ----- the skills ---------------------------------------------------------

const CHANGELOG_DESCRIPTION: &str = "Drafts release notes and changelog entries from merged \
pull requests, commit messages or a list of tickets. Groups changes by impact, calls out \
breaking changes and upgrade steps, and writes for the people who install the software rather \
than for its developers. Use when the user asks for release notes, a changelog section, or a \
summary of what shipped in a version.";

const CHANGELOG_BODY: &str = r#"# Writing release notes

Release notes are read by people deciding whether to upgrade. Write for them: what changes for me, what must I do, and what can I safely ignore.

## Steps

1. Collect the input. Ask for the version number and the release date if the user did not give them. Accept pull request titles, commit subjects, ticket summaries or a raw log; never invent a change that is not in the input.
2. Drop the noise. Leave out merges that only touch CI configuration, internal refactors with no visible effect, dependency bumps that change nothing for users, and reverted work (a change and its revert cancel out).
3. Sort each remaining change into exactly one category: Breaking changes, Security, New features, Improvements, Bug fixes, Deprecations. `references/categories.md` covers the awkward cases, such as a bug fix that changes behaviour somebody may rely on (that one is a breaking change).
4. Rewrite every entry from the reader's side. Start with a verb in the past tense, name the feature the way users know it, and say what is different now. "Fixed a crash when exporting a report with an empty date range" beats "Handle None in export_range".
5. Give every breaking change an upgrade step: what to change, with a short before-and-after snippet when configuration or code is involved. If you cannot tell what users must do, ask instead of guessing.
6. Credit contributors when the input names them, in the form the project already uses.
7. Order the sections: a two-sentence summary, Breaking changes, Security, New features, Improvements, Bug fixes, Deprecations. Leave out empty sections.

## Style

Follow `references/style-guide.md` for tone, tense, code and link formatting, and length. The short version: plain words, one line per entry where possible, no marketing adjectives, no emoji unless the project already uses them.

## Checks before you answer

- Every entry traces back to an item in the input.
- Every breaking change has an upgrade step.
- Issue and pull request numbers are kept exactly as given, as links or plain references.
- The summary names the most important change first.
- Nothing is promised that the input does not support: no dates for future work, no speed-up figures that nobody measured.

If the input is very long, write the breaking-change and security sections first and ask whether the user wants the full list or only the highlights.
"#;

const CHANGELOG_STYLE: &str = r#"# Release note style

Voice: neutral and direct. Address the reader as "you" only in upgrade steps.

Tense: past tense for what changed ("Added", "Fixed", "Removed"), present tense for how things work now.

Length: one line per entry, two at most. A summary of two sentences. If an entry needs a paragraph, it probably needs a short upgrade guide instead; link to it.

Code: wrap option names, commands, file names and identifiers in backticks. Use fenced blocks only for multi-line snippets, and name the language.

Links: keep pull request and issue references in the project's usual form, for example `(#1234)` at the end of the line. Do not link to private trackers in public notes.

Words to avoid: "simply", "just", "blazing", "seamless", "revolutionary", "various improvements". Say what improved.

Numbers: give versions in full (`2.4.0`, not `2.4`). Write dates as `2025-03-14`.

Breaking changes: lead with the consequence ("Configs that set `retry.max` to 0 now fail to load"), then the fix.
"#;

const CHANGELOG_CATEGORIES: &str = r#"# Choosing a category

- A fix that changes documented behaviour is a breaking change, even if the old behaviour was a bug.
- A new option with a default that preserves the old behaviour is a new feature; a changed default is a breaking change.
- Faster, smaller or quieter without new behaviour is an improvement.
- Anything with a CVE, an advisory or a fix for leaked data goes under Security, whatever else it is.
- A deprecation warning that starts firing is a deprecation; the removal later is a breaking change.
"#;

const MIGRATION_DESCRIPTION: &str = "Reviews database schema migrations before they run in \
production. Checks for long table locks, unsafe column type changes, missing indexes on new \
foreign keys, data backfills inside one transaction, and whether the change can be rolled \
back. Use when the user shares a migration file, an ALTER TABLE statement, or asks whether a \
schema change is safe to deploy.";

const MIGRATION_BODY: &str = r#"# Reviewing a schema migration

A migration is safe when it can run while the old and the new version of the application are both serving traffic, and when it can be undone without losing data.

## Read the migration

Find out which database and version it targets, how large the affected tables are, and whether the migration framework wraps each file in a transaction. Ask if you do not know the table sizes: a change that is instant on a thousand rows can block writes for an hour on a billion.

## Look for these problems

1. Locks. Adding a column with a volatile default, changing a column type, adding a NOT NULL constraint without a prior check, and creating an index without the concurrent option all take locks that block writes on large tables. Suggest the non-blocking form: add the column nullable, backfill, then validate the constraint separately; build indexes concurrently.
2. Backfills in the same transaction. Updating millions of rows in one statement holds locks and bloats the write-ahead log. Move backfills into batches outside the schema change, with a pause between batches.
3. Renames and drops. Renaming or dropping a column that the running application still reads breaks it the moment the migration commits. Use expand and contract: add the new column, write to both, move reads, then drop the old one in a later release.
4. Foreign keys. A new foreign key needs an index on the referencing column, or deletes on the parent table turn into sequential scans. Add the constraint as not valid first, then validate it.
5. Rollback. Every migration needs a down step or a written reason why it cannot have one. A down step that drops a column with data in it is data loss, not a rollback.
6. Defaults and time zones. Check that timestamp columns agree on time zone handling and that new defaults match what the application writes.

## Write the review

List the findings in order of risk. For each one, quote the statement, say what happens in production, and give the safer version. End with a verdict: safe to deploy, safe after the listed changes, or needs a maintenance window. Keep it short; reviewers skim.
"#;

const MIGRATION_LOCKING: &str = r#"# Lock cheat sheet

| statement | blocks writes on a large table? | safer form |
| --- | --- | --- |
| add nullable column, no default | no | — |
| add column with constant default | no on recent versions | — |
| add column with volatile default | yes | add nullable, backfill in batches |
| set NOT NULL | yes (full scan) | add a check constraint not valid, validate, then set |
| create index | yes | create index concurrently |
| change column type | usually yes (rewrite) | new column, dual write, swap |
| add foreign key | yes (scan) | add not valid, then validate |
"#;

const POSTMORTEM_DESCRIPTION: &str = "Helps write a blameless postmortem after an outage or a \
serious bug: builds the timeline from chat logs and alerts, separates the trigger from the \
root cause and contributing factors, and turns lessons into owned, dated action items. Use \
when the user mentions an incident review, a postmortem, a retrospective on an outage, or asks \
what went wrong during an incident.";

const POSTMORTEM_BODY: &str = r#"# Writing a postmortem

The purpose of a postmortem is to make the next incident less likely or less harmful. It is not a verdict on people. Write about systems, decisions and the information people had at the time.

## Gather

Ask for the alert history, the incident channel log, deploy and configuration change records, dashboards with the relevant time range, and the customer impact as support saw it. Note the time zone of every source; timelines go wrong when one tool logs in UTC and another in local time.

## Build the timeline

Use one line per event with a UTC timestamp: first bad signal, first alert, first human response, each hypothesis tried, each mitigation, recovery, and the all-clear. Mark the gaps: time between the first signal and the first alert is detection time; time between the alert and the mitigation is response time. Both belong in the summary.

## Explain

- Trigger: the change or event that started it.
- Root cause: the weakness that let the trigger do harm. There is often more than one; do not force a single cause.
- Contributing factors: anything that made detection slower or impact larger, such as a missing alert, a confusing dashboard, a runbook that was out of date, or a retry storm.
- What went well: include it. It tells the team what to keep.

Replace names with roles ("the on-call engineer") and avoid words like "should have" or "failed to". Ask what made the action reasonable at the time.

## Action items

Each item has one owner, a due date, a priority and a link to a ticket. Prefer items that remove a class of failure (a guard in the deploy pipeline) over items that ask people to be careful. Three to seven items is typical; a list of twenty will not get done.

## Format

Sections: Summary (impact, duration, detection and response times in three sentences), Timeline, Causes, What went well, Action items, Open questions. Keep the summary readable by someone outside the team.
"#;

const POSTMORTEM_TEMPLATE: &str = r#"# Postmortem template

Title: <service> <what broke> on <date>

Summary: three sentences on impact, duration, detection and response.

Timeline (UTC): one event per line.

Causes: trigger, root causes, contributing factors.

What went well:

Action items: owner, due date, priority, ticket.

Open questions:
"#;

const API_DESCRIPTION: &str = "Reviews the design of HTTP and JSON APIs before they are built \
or published: resource naming, status codes, pagination, error bodies, idempotency, versioning \
and backward compatibility. Use when the user shares an OpenAPI document or an endpoint \
sketch, asks how an API should look, or plans a change to an existing endpoint that might \
break clients.";

const API_BODY: &str = r#"# Reviewing an API design

Good APIs are boring: predictable names, the usual status codes, one error shape, and no surprises when a client upgrades. Review against the conventions the organisation already follows before applying general advice; consistency with the rest of the API beats local elegance.

## Resources and names

Use plural nouns for collections and identifiers in the path (`/orders/{order_id}`). Keep verbs out of paths unless an action truly is not a state change on a resource; then use a sub-resource such as `/orders/{order_id}/cancel` with POST. Field names follow one case style across the whole API.

## Methods and status codes

GET never changes state. POST creates or triggers, PUT replaces, PATCH changes part of a resource, DELETE removes. Return 201 with a Location header on creation, 204 when there is no body, 400 for malformed input, 404 for unknown resources, 409 for conflicts with current state, 422 only if the API already uses it for validation errors, and 429 with Retry-After when rate limiting. Never return 200 with an error inside the body.

## Errors

One error body everywhere: a stable machine-readable code, a human message, and a pointer to the offending field when there is one. Error codes are part of the contract; changing them breaks clients.

## Lists

Every list endpoint paginates from day one, with a cursor rather than page numbers when data changes often. Document the maximum page size and the default sort order. Filtering uses query parameters with the same names as the fields.

## Safety

Any POST that creates something a client might retry after a timeout needs an idempotency key. Money, bookings and messages are the usual cases. Say how long keys are remembered.

## Compatibility

Adding optional fields and new endpoints is compatible. Removing or renaming fields, changing types, making optional input required, and changing the meaning of a value are not. For breaking changes, propose a new version or a deprecation period with a Sunset header, and check who calls the endpoint today.

## The review

Group findings as must fix, should fix and nitpicks. Quote the path or schema you mean and give the corrected version.
"#;

const FLAKY_DESCRIPTION: &str = "Diagnoses tests that pass and fail without code changes. \
Looks for timing assumptions, shared state between tests, ordering dependencies, network or \
clock access, and resource leaks, then proposes a fix or a quarantine with a tracking issue. \
Use when the user reports an intermittent CI failure, a test that only fails in parallel, or \
asks why a test is flaky.";

const FLAKY_BODY: &str = r#"# Triage of a flaky test

A flaky test costs more than a failing one: people learn to ignore red builds. The goal is either a fix or a quarantine with an owner, never a silent retry.

## Collect evidence

Ask for the failure output of at least two failing runs and one passing run, the CI job configuration, and how often it fails. Check whether failures cluster on one runner type, one time of day, or one shard. Run the test alone in a loop (fifty or a hundred times) and then with the rest of its suite; the difference tells you a lot.

## Usual causes, most common first

1. Waiting on time. Sleeps, timeouts shorter than a slow CI machine needs, and assertions that race an asynchronous task. Replace sleeps with waiting for the condition, with a generous upper bound.
2. Shared state. Tests that share a database, a temporary directory, an environment variable, a global or a port. Failing only in parallel or only in a certain order points here. Give each test its own resources.
3. Order dependence. A test that relies on data another test created. Run the suite in random order to expose it.
4. Real clocks and dates. Tests that fail around midnight, at month ends or in another time zone. Inject a clock.
5. The network. Calls to real services, DNS, or package registries. Replace with a local fake.
6. Randomness. Unseeded random data that sometimes hits an edge case. Seed it and log the seed; the rare case may be a real bug.
7. Leaks. File handles, threads or connections left open by earlier tests, so later ones hit limits.
8. Floating point and unordered collections compared exactly.

## Decide

If you find the cause, propose the smallest fix and a way to prove it: the loop that used to fail now passes a few hundred times. If you cannot find it within reasonable effort, quarantine the test (skip it in the main pipeline, keep running it in a separate job), open an issue with the evidence, and name an owner. Retrying automatically hides real race conditions in the product, so suggest it only as a stopgap with an expiry date.
"#;

const FLAKY_PATTERNS: &str = r#"# Failure signatures

- Timeout in an async assertion, passes locally: waiting on time.
- Fails only with parallel workers: shared state or fixed ports.
- "Address already in use": fixed port.
- Fails after midnight UTC: real clock.
- Different failure each time, same file: leaked state from an earlier test.
"#;

const DEPENDENCY_DESCRIPTION: &str = "Plans and carries out upgrades of third-party libraries \
and frameworks: reads the changelogs between the current and the target version, lists the \
breaking changes that affect this codebase, orders the steps so the build stays green, and \
names the tests to run. Use when the user wants to bump a dependency, move to a new major \
version, or fix a security advisory.";

const DEPENDENCY_BODY: &str = r#"# Upgrading a dependency

An upgrade is a small project. Plan it so that each step leaves the build green and can be reviewed on its own.

## Find out where you are

Read the lock file for the exact current version and for every package that depends on the one being upgraded. Note whether the dependency is direct or only pulled in by something else; a transitive dependency is usually upgraded by upgrading its parent.

## Read what changed

Read the release notes of every version between the current and the target one, not only the latest. Collect the breaking changes, the deprecations that turn into removals, changed defaults, raised minimum language or runtime versions, and changes to licences. Skipping several major versions is often easier done one major version at a time.

## Map the changes to this code

Search the codebase for each removed or renamed function, option and import. Count the call sites; the count decides whether a change is a one-line fix or its own pull request. Watch for behaviour changes with no compile error, such as a new default for a timeout or a different date format; they are the ones that reach production.

## Order the work

1. Fix deprecation warnings on the current version first, where the new API already exists.
2. Upgrade the dependency and fix what breaks, in one focused change.
3. Adopt new features afterwards, separately.

For a security advisory, check first whether a patch release on the current major version fixes it; that is usually the fastest safe route.

## Verify

Name the tests that cover the affected code and run the full suite. Look at what the tests do not cover, such as serialization formats written to disk, wire protocols with other services, and configuration parsing, and suggest a manual check for each. Compare build size and start-up time if the dependency is large.

## Report

Summarise: from and to versions, the breaking changes that mattered here, the files changed, the risks left, and how to roll back (usually: revert the lock file change).
"#;

const LOGS_DESCRIPTION: &str = "Turns a question about production behaviour into a log search \
query: picks the service, the time window and the fields, filters by status or error class, \
and groups or counts the results so the answer is a number or a short table. Use when the user \
asks to find, count or chart log events, for example errors after a deploy or slow requests \
for one customer.";

const LOGS_BODY: &str = r#"# Building a log query

People ask questions ("did the deploy break checkout?"); the log store answers queries. Your job is the translation, plus saying what the answer does and does not show.

## Pin down the question

Identify four things before writing anything: the service or services, the time window, the events that count (status codes, error classes, log levels, a message pattern), and the shape of the answer (a count, a rate, a breakdown by some field, or a list of examples). If the user gives a deploy time, compare a window before it with a window of the same length after it; a count without a baseline means little.

## Write the query

The query language of the team's log store is described in `references/syntax.md`; `references/recipes.md` has worked queries for the questions that come up most. Build queries in this order:

1. Source and time: the index or stream for the service, and an absolute time range in UTC. Relative ranges such as "last hour" change meaning when someone reruns the query later.
2. Filters: the cheapest and most selective first (service, environment, status), free-text matches last.
3. Shaping: group by the field the user cares about, count or take percentiles, sort, and limit the rows.

Prefer structured fields over searching message text. Match status classes with a range (500 to 599) rather than listing codes.

## Check the result makes sense

- Compare against a known quantity, such as total request count for the same window, to catch a filter that matches nothing or everything.
- Watch for sampling: some services log only a fraction of successful requests, so ratios computed from logs can be off.
- Note the log store's ingestion delay; the last few minutes may be incomplete.

## Answer

Give the query in a fenced block, then the reading of the result in one or two sentences, then what to look at next (an example trace, a dashboard, a narrower query). If the user cannot run queries, say what result would confirm or rule out their theory.
"#;

pub(crate) const LOGS_SYNTAX: &str = r#"# Query syntax of the team's log store

A query is a pipeline of stages separated by `|`. The first stage selects the source and time range; later stages filter and shape.

```
from logs.checkout
  between 2025-03-14T09:00:00Z and 2025-03-14T10:00:00Z
| where env == "prod" and status >= 500 and status <= 599
| stats count() by route
| sort count desc
| limit 20
```

Stages:

- `from <stream>`: the stream of one service; `logs.*` for all.
- `between <t1> and <t2>`: absolute UTC times; required.
- `where <condition>`: `==`, `!=`, `<`, `<=`, `>`, `>=`, `and`, `or`, `not`, `contains "text"`, `matches /regex/`.
- `stats <aggregate> [by <field>, ...]`: `count()`, `avg(f)`, `p50(f)`, `p95(f)`, `p99(f)`, `max(f)`, `distinct(f)`.
- `bucket <duration>`: adds a `time` field for time series, such as `bucket 5m`.
- `sort <field> [asc|desc]`, `limit <n>`, `fields <f1>, <f2>` to keep only some fields.

Common fields: `service`, `env`, `route`, `status`, `duration_ms`, `customer_id`, `trace_id`, `level`, `error.class`, `message`.

Text search with `contains` scans every event in the range; put it last and keep the range short.
"#;

const LOGS_RECIPES: &str = r#"# Worked queries

Starting points for the questions asked most often. Swap in the stream, the times and the values; keep the shape.

## Did a deploy raise the error rate?

Count every request and the failed ones per hour, from an hour before the deploy to an hour after, and compare the two ratios:

```
from logs.checkout
  between 2025-03-14T13:00:00Z and 2025-03-14T15:00:00Z
| where env == "prod"
| bucket 1h
| stats count() by time
```

Run it a second time with `and status >= 500` added to the `where` stage. A deploy inside the window splits it into before and after; line the buckets up with the deploy minute.

## Which routes are slow for one customer?

```
from logs.api
  between 2025-03-14T00:00:00Z and 2025-03-15T00:00:00Z
| where env == "prod" and customer_id == "c-1042"
| stats p95(duration_ms), count() by route
| limit 10
```

Routes with a handful of requests give noisy percentiles; say so instead of ranking them.

## What is failing right now?

```
from logs.*
  between 2025-03-14T09:30:00Z and 2025-03-14T10:00:00Z
| where level == "error"
| stats count() by service, error.class
| sort count desc
| limit 15
```

## One example to look at

Keep a few raw events with `fields trace_id, route, error.class, message` and `limit 5`, and open the trace of the first one.
"#;

fn base_skills() -> Vec<InCodeSkill> {
    let build = |name: &str, description: &str, body: &str, resources: &[(&str, &str)]| {
        let mut definition = define_skill(name, description).body(body);
        for (path, text) in resources {
            definition = definition.resource(*path, *text);
        }
        definition.build().expect("the scenario skills are valid")
    };
    vec![
        build(
            "changelog-writer",
            CHANGELOG_DESCRIPTION,
            CHANGELOG_BODY,
            &[
                ("references/categories.md", CHANGELOG_CATEGORIES),
                ("references/style-guide.md", CHANGELOG_STYLE),
            ],
        ),
        build(
            "sql-migration-review",
            MIGRATION_DESCRIPTION,
            MIGRATION_BODY,
            &[("references/locking.md", MIGRATION_LOCKING)],
        ),
        build(
            "incident-postmortem",
            POSTMORTEM_DESCRIPTION,
            POSTMORTEM_BODY,
            &[("references/template.md", POSTMORTEM_TEMPLATE)],
        ),
        build("api-design-review", API_DESCRIPTION, API_BODY, &[]),
        build(
            "flaky-test-triage",
            FLAKY_DESCRIPTION,
            FLAKY_BODY,
            &[("references/patterns.md", FLAKY_PATTERNS)],
        ),
        build(
            "dependency-upgrade",
            DEPENDENCY_DESCRIPTION,
            DEPENDENCY_BODY,
            &[],
        ),
    ]
}

fn added_skill() -> InCodeSkill {
    define_skill("log-query-builder", LOGS_DESCRIPTION)
        .body(LOGS_BODY)
        .resource("references/syntax.md", LOGS_SYNTAX)
        .resource("references/recipes.md", LOGS_RECIPES)
        .build()
        .expect("log-query-builder is a valid skill")
}

/// The six skills the sessions start with.
pub(crate) fn initial_provider() -> InCodeProvider {
    InCodeProvider::new(base_skills()).expect("distinct skill names")
}

/// The same six plus `log-query-builder`, swapped in mid-session.
pub(crate) fn extended_provider() -> InCodeProvider {
    let mut skills = base_skills();
    skills.push(added_skill());
    InCodeProvider::new(skills).expect("distinct skill names")
}

/// Word counts of every scenario skill: (name, description words, body words,
/// resource paths).
pub(crate) fn skill_sizes() -> Vec<(String, usize, usize, Vec<String>)> {
    let mut skills = base_skills();
    skills.push(added_skill());
    skills
        .iter()
        .map(|s| {
            let skill = s.skill();
            (
                skill.name().to_owned(),
                skill.metadata.description.split_whitespace().count(),
                skill.body.split_whitespace().count(),
                skill.resources.paths(),
            )
        })
        .collect()
}

// ----- the script ------------------------------------------------------------

/// What a scripted tool call returns, for the step row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Returns {
    /// The skill's body (plus any docs the call names).
    Body,
    /// A reference file (a doc on the trpc surface).
    File,
    /// An error result.
    Error,
    /// The one-line note for a skill that is loaded already.
    AlreadyLoaded,
}

/// One scripted action, applied to both sessions.
#[derive(Debug, Clone)]
enum Action {
    /// `push_user`.
    User(&'static str),
    /// The model's turn: `build_request` (recorded as one step).
    Request,
    /// The model calls a tool: `push_assistant` with the call, then
    /// `handle_tool_call`. The call is written for the default surface
    /// (`load_skill`, `read_skill_file`); [`on_surface`] spells it for
    /// another one.
    Call {
        id: &'static str,
        tool: &'static str,
        arguments: Value,
        /// The docs the trpc call names instead of the default surface's
        /// arguments: for `load_skill`, docs that come with the body (the
        /// default surface's load takes none); for `read_skill_file`, the doc
        /// selected in place of `path`. Empty: a plain load, or `[path]`.
        trpc_docs: &'static [&'static str],
        /// What comes back, for the step row.
        returns: Returns,
        /// A remark for the step row, in parentheses ("" for none).
        remark: &'static str,
        /// Whether this call delivers a skill body (a fresh load).
        fresh_load: bool,
    },
    /// The model's final text for the turn.
    Answer(&'static str),
    /// A skill appears in the provider; `refresh_catalog` announces it.
    AddSkill,
}

/// A `load_skill` call of the script.
fn load(
    id: &'static str,
    name: &'static str,
    returns: Returns,
    remark: &'static str,
    fresh_load: bool,
) -> Action {
    Action::Call {
        id,
        tool: "load_skill",
        arguments: json!({ "name": name }),
        trpc_docs: &[],
        returns,
        remark,
        fresh_load,
    }
}

/// A `read_skill_file` call of the script.
fn read(id: &'static str, skill: &'static str, path: &'static str) -> Action {
    Action::Call {
        id,
        tool: "read_skill_file",
        arguments: json!({ "skill": skill, "path": path }),
        trpc_docs: &[],
        returns: Returns::File,
        remark: "",
        fresh_load: false,
    }
}

/// `action` with the docs its trpc spelling names (see [`Action::Call`]).
fn with_trpc_docs(mut action: Action, docs: &'static [&'static str]) -> Action {
    if let Action::Call { trpc_docs, .. } = &mut action {
        *trpc_docs = docs;
    }
    action
}

/// A scripted call as `surface` spells it: the tool name and the arguments.
///
/// The default surface takes the script as written. trpc renames the tools
/// (`skill_load`, `skill_select_docs`) and the skill argument, reads docs by
/// selecting them (`docs` is a list; the mode `add`, so a read keeps the docs
/// read before selected, as the default surface's reads do), and can
/// load docs together with the body.
fn on_surface(
    surface: &Surface,
    tool: &str,
    arguments: &Value,
    trpc_docs: &[&str],
) -> (String, Value) {
    let field = |key: &str| arguments.get(key).cloned().unwrap_or(Value::Null);
    match (surface, tool) {
        (Surface::Default, _) => (tool.to_owned(), arguments.clone()),
        (Surface::Trpc, "load_skill") => {
            let mut args = serde_json::Map::new();
            args.insert(surface.load_argument().to_owned(), field("name"));
            if !trpc_docs.is_empty() {
                args.insert("docs".to_owned(), json!(trpc_docs));
            }
            (surface.load_tool().to_owned(), Value::Object(args))
        }
        (Surface::Trpc, "read_skill_file") => {
            let docs = if trpc_docs.is_empty() {
                json!([field("path")])
            } else {
                json!(trpc_docs)
            };
            let read_tool = surface.read_tool().expect("trpc reads docs");
            (
                read_tool.to_owned(),
                json!({ "skill": field("skill"), "docs": docs, "mode": "add" }),
            )
        }
        _ => panic!("the script has no spelling of `{tool}` for {surface:?}"),
    }
}

/// The step-row text of a call as sent: "tool subject → what came back".
fn call_note(tool: &str, arguments: &Value, returns: Returns, remark: &str) -> String {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let docs: Vec<&str> = arguments
        .get("docs")
        .and_then(Value::as_array)
        .map(|d| d.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let skill = text("name").or_else(|| text("skill")).unwrap_or("?");
    let mut subject = skill.to_owned();
    if let Some(path) = text("path") {
        let _ = write!(subject, " {path}");
    }
    let loads = returns == Returns::Body;
    if !docs.is_empty() {
        let lead = if loads { " with docs " } else { " " };
        let _ = write!(subject, "{lead}{}", docs.join(", "));
    }
    let what = match returns {
        Returns::Body if docs.is_empty() => "body",
        Returns::Body if docs.len() == 1 => "body + doc",
        Returns::Body => "body + docs",
        Returns::File if docs.is_empty() => "file",
        Returns::File => "doc",
        Returns::Error => "error",
        Returns::AlreadyLoaded => "already loaded",
    };
    let mut out = format!("{tool} {subject} → {what}");
    if !remark.is_empty() {
        let _ = write!(out, " ({remark})");
    }
    out
}

fn script() -> Vec<Action> {
    use Action::{AddSkill, Answer, Request, User};
    vec![
        // Turn 1: a fresh load, then one of its reference files.
        User(
            "We cut release 2.4.0 tomorrow. Merged since 2.3.2: #812 add CSV export to the \
             reports page; #815 fix crash when a report has an empty date range; #819 bump \
             eslint; #821 the `retry.max` setting now rejects 0 (it used to mean unlimited); \
             #824 refactor report query builder; #827 speed up dashboard loading by caching \
             team lists. Please draft the release notes.",
        ),
        Request,
        load(
            "call_01",
            "changelog-writer",
            Returns::Body,
            "fresh load",
            true,
        ),
        Request,
        read("call_02", "changelog-writer", "references/style-guide.md"),
        Request,
        Answer(
            "Release 2.4.0 adds CSV export for reports and makes dashboards load faster. One \
             setting changed meaning, see below.\n\n## Breaking changes\n- `retry.max` no \
             longer accepts `0`. Configs that set it to 0 now fail to load; to keep retrying \
             without a limit, remove the setting instead. (#821)\n\n## New features\n- Added \
             CSV export to the reports page. (#812)\n\n## Improvements\n- Dashboards load \
             faster because team lists are cached. (#827)\n\n## Bug fixes\n- Fixed a crash when \
             a report has an empty date range. (#815)\n\nLeft out as internal: #819, #824.",
        ),
        // Turn 2: no tool call.
        User("Good. Make the breaking change entry one line shorter."),
        Request,
        Answer(
            "- `retry.max: 0` now fails to load; remove the setting for unlimited retries. \
             (#821)",
        ),
        // Turn 3: the model guesses a skill name that does not exist.
        User(
            "Separate thing: can you sanity-check our Terraform plan for the new storage \
             bucket before I apply it?",
        ),
        Request,
        load(
            "call_03",
            "terraform-plan-review",
            Returns::Error,
            "no such skill",
            false,
        ),
        Request,
        Answer(
            "There is no Terraform skill here, so general advice: paste the plan output and I \
             will check for resources being replaced rather than updated, public access \
             settings on the bucket, missing encryption and versioning, and anything \
             destroyed that you did not expect.",
        ),
        // Turn 4: the model loads the same skill again.
        User(
            "Back to the notes: two more PRs merged this morning, #830 dark mode for the \
             settings page and #831 fix for the export button doing nothing on Safari.",
        ),
        Request,
        load(
            "call_04",
            "changelog-writer",
            Returns::AlreadyLoaded,
            "",
            false,
        ),
        Request,
        Answer(
            "Added to 2.4.0:\n\n## New features\n- Added a dark mode to the settings page. \
             (#830)\n\n## Bug fixes\n- Fixed the export button doing nothing in Safari. (#831)",
        ),
        // Turn 5: no tool call.
        User("Thanks. Which of these would you mention in the announcement email?"),
        Request,
        Answer(
            "Lead with CSV export and faster dashboards, mention dark mode, and include the \
             `retry.max` change with its one-line fix so nobody is surprised by a config \
             error.",
        ),
        // Between turns 5 and 6 a skill is added and announced.
        AddSkill,
        // Turn 6: the new skill is loaded, then a reference file is read. On
        // trpc the load brings `references/syntax.md` with the body (the load
        // with docs), so the read selects the skill's other doc instead.
        User(
            "After yesterday's deploy at 14:05 UTC the checkout error rate looked higher. How \
             do I check that in the logs?",
        ),
        Request,
        with_trpc_docs(
            load(
                "call_05",
                "log-query-builder",
                Returns::Body,
                "fresh load of the added skill",
                true,
            ),
            &["references/syntax.md"],
        ),
        Request,
        with_trpc_docs(
            read("call_06", "log-query-builder", "references/syntax.md"),
            &["references/recipes.md"],
        ),
        Request,
        Answer(
            "Compare the hour before the deploy with the hour after:\n\n```\nfrom \
             logs.checkout\n  between 2025-03-13T13:05:00Z and 2025-03-13T15:05:00Z\n| where \
             env == \"prod\"\n| bucket 1h\n| stats count() by time, status >= 500\n```\n\nIf \
             the share of 5xx responses in the second hour is clearly above the first, the \
             deploy is the likely cause; the next step is a few example traces from \
             `trace_id`.",
        ),
    ]
}

// ----- running it ------------------------------------------------------------

/// One model request of the script, in both modes.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// What was appended since the previous request.
    pub(crate) label: String,
    /// Whether a fresh skill load happened since the previous request.
    pub(crate) after_fresh_load: bool,
    /// The OpenAI Chat Completions body in the default mode.
    pub(crate) default_json: String,
    /// The same request in the legacy mode.
    pub(crate) legacy_json: String,
}

/// One tool call as sent, with its result in both modes.
#[derive(Debug, Clone)]
pub(crate) struct CallRecord {
    /// The tool name on the run's surface.
    pub(crate) tool: String,
    /// The arguments on the run's surface.
    pub(crate) arguments: Value,
    /// The tool result's text in the default mode.
    pub(crate) default_result: String,
    /// The tool result's text in the legacy mode.
    pub(crate) legacy_result: String,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// Every request, in order.
    pub(crate) steps: Vec<Step>,
    /// Every tool call, in order.
    pub(crate) calls: Vec<CallRecord>,
    /// The stable system block of the default-mode agent.
    pub(crate) stable_system: String,
    /// The pinned catalog (name, description) of the default-mode session.
    pub(crate) pinned: Vec<(String, String)>,
    /// The tools of the default-mode request, as the OpenAI JSON array.
    pub(crate) tools_json: String,
}

impl Outcome {
    /// The request bodies of the default mode, in order.
    pub(crate) fn default_bodies(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.default_json.as_str()).collect()
    }

    /// The request bodies of the legacy mode, in order.
    pub(crate) fn legacy_bodies(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.legacy_json.as_str()).collect()
    }
}

/// The surfaces the script runs on, with the name their table is headed by.
pub(crate) fn surfaces() -> Vec<(&'static str, Surface)> {
    vec![("default", Surface::Default), ("trpc", Surface::Trpc)]
}

fn agent(
    provider: Arc<dyn SkillProvider>,
    surface: &Surface,
    materialization: Materialization,
) -> Agent {
    Agent::builder("engineering-assistant", provider)
        .instructions(INSTRUCTIONS)
        // Budgets (compaction) count with the same tokenizer as the tables.
        .token_counter(tokenizer())
        .surface(surface.clone())
        .materialization(materialization)
        .build()
        .expect("the agent configuration is valid")
}

/// Applies `action` (spelled for the session's surface) and returns the tool
/// result's text for a call.
async fn apply(session: &mut Session, action: &Action, surface: &Surface) -> Option<String> {
    match action {
        Action::User(text) => session.push_user(*text).await.expect("push_user"),
        Action::Request => {}
        Action::Call {
            id,
            tool,
            arguments,
            trpc_docs,
            fresh_load,
            ..
        } => {
            let (tool, arguments) = on_surface(surface, tool, arguments, trpc_docs);
            let call = ToolCall::new(*id, tool.as_str(), arguments.clone());
            let loaded_before = session.loaded().len();
            session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
            let Dispatch::Handled(result) = session.handle_tool_call(&call).await else {
                panic!("{tool} is a skill tool");
            };
            // The script's labels must match what the engine did: only a fresh
            // load adds a skill to the loaded set.
            assert_eq!(
                session.loaded().len() > loaded_before,
                *fresh_load,
                "{tool} {arguments}: unexpected result {:?}",
                result.content
            );
            return Some(result.content);
        }
        Action::Answer(text) => session.push_assistant(Message::assistant(*text)),
        Action::AddSkill => {
            let delta = session.refresh_catalog().await.expect("refresh_catalog");
            assert!(
                delta.is_some_and(|d| d.added.len() == 1),
                "the refresh announces exactly one new skill"
            );
        }
    }
    None
}

/// What the step row says about an action (`None` for a request).
fn note(action: &Action, turn: usize, surface: &Surface) -> Option<String> {
    match action {
        Action::User(_) => Some(format!("user message (turn {turn})")),
        Action::Request => None,
        Action::Call {
            tool,
            arguments,
            trpc_docs,
            returns,
            remark,
            ..
        } => {
            let (tool, arguments) = on_surface(surface, tool, arguments, trpc_docs);
            Some(format!(
                "assistant call, {}",
                call_note(&tool, &arguments, *returns, remark)
            ))
        }
        Action::Answer(_) => Some("answer".to_owned()),
        Action::AddSkill => Some("catalog delta (log-query-builder added)".to_owned()),
    }
}

/// Runs the script on `surface`, with both agents over one provider.
pub(crate) fn run(surface: &Surface) -> Outcome {
    pollster::block_on(run_async(surface))
}

async fn run_async(surface: &Surface) -> Outcome {
    let provider = Arc::new(SwappableProvider::new(Arc::new(initial_provider())));
    let shared: Arc<dyn SkillProvider> = Arc::clone(&provider) as Arc<dyn SkillProvider>;
    let default_agent = agent(Arc::clone(&shared), surface, Materialization::ToolResult);
    let legacy_agent = agent(shared, surface, Materialization::SystemMessage);
    let mut default = default_agent.start_session().await.expect("start_session");
    let mut legacy = legacy_agent.start_session().await.expect("start_session");

    let mut steps = Vec::new();
    let mut calls = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut fresh = false;
    let mut turn = 0;
    let mut stable_system = String::new();
    let mut tools_json = String::new();
    for action in script() {
        if matches!(action, Action::AddSkill) {
            provider.replace(Arc::new(extended_provider()));
        }
        let default_result = apply(&mut default, &action, surface).await;
        let legacy_result = apply(&mut legacy, &action, surface).await;
        if let Action::Call {
            tool,
            arguments,
            trpc_docs,
            fresh_load,
            ..
        } = &action
        {
            fresh |= *fresh_load;
            let (tool, arguments) = on_surface(surface, tool, arguments, trpc_docs);
            calls.push(CallRecord {
                tool,
                arguments,
                default_result: default_result.unwrap_or_default(),
                legacy_result: legacy_result.unwrap_or_default(),
            });
        }
        if matches!(action, Action::User(_)) {
            turn += 1;
        }
        if let Some(n) = note(&action, turn, surface) {
            pending.push(n);
            continue;
        }
        let request = default.build_request();
        if stable_system.is_empty() {
            stable_system = request
                .system
                .first()
                .map(|b| b.text.clone())
                .unwrap_or_default();
            tools_json = tools_array(&wire::openai_chat(&request, MODEL));
        }
        let legacy_request = legacy.build_request();
        steps.push(Step {
            label: std::mem::take(&mut pending).join("; "),
            after_fresh_load: std::mem::take(&mut fresh),
            default_json: wire::openai_chat(&request, MODEL),
            legacy_json: wire::openai_chat(&legacy_request, MODEL),
        });
    }
    let pinned = default
        .pinned_catalog()
        .entries()
        .iter()
        .map(|m| (m.name.as_str().to_owned(), m.description.clone()))
        .collect();
    Outcome {
        steps,
        calls,
        stable_system,
        pinned,
        tools_json,
    }
}

/// The `"tools":[…]` array of an OpenAI body (tools come before messages).
fn tools_array(body: &str) -> String {
    let start = body
        .find("\"tools\":")
        .map_or(0, |i| i + "\"tools\":".len());
    let end = body.find(",\"messages\":").unwrap_or(body.len());
    body.get(start..end).unwrap_or_default().to_owned()
}

/// The tool names in a `"tools"` array as [`tools_array`] returns it.
pub(crate) fn tool_names(tools_json: &str) -> Vec<String> {
    let tools: Value = serde_json::from_str(tools_json).unwrap_or(Value::Null);
    tools
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

// ----- measuring -------------------------------------------------------------

/// The o200k tokenizer (GPT-4o's), built at run time from data compiled into
/// `tiktoken-rs` (so it works offline). It is also the agents'
/// [`TokenCounter`]: a tokenizer built at run time plugs in through the trait.
pub(crate) struct O200k {
    bpe: CoreBPE,
}

impl O200k {
    /// The underlying BPE (to decode tokens).
    pub(crate) fn bpe(&self) -> &CoreBPE {
        &self.bpe
    }
}

impl fmt::Debug for O200k {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("O200k")
    }
}

impl TokenCounter for O200k {
    fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }
}

/// The o200k tokenizer, built once per process.
pub(crate) fn tokenizer() -> Arc<O200k> {
    static TOKENIZER: OnceLock<Arc<O200k>> = OnceLock::new();
    Arc::clone(TOKENIZER.get_or_init(|| {
        Arc::new(O200k {
            bpe: tiktoken_rs::o200k_base().expect("the o200k tokenizer data is built in"),
        })
    }))
}

/// Tokens of `text` (no special tokens).
pub(crate) fn tokens(bpe: &O200k, text: &str) -> Vec<u32> {
    bpe.bpe.encode_ordinary(text)
}

/// Length of the longest common prefix of two token sequences.
pub(crate) fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Per request: its token count, and (from the second request on) the share
/// of the previous request's tokens that are an exact prefix of this one's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    /// Tokens of this request.
    pub(crate) tokens: usize,
    /// Common prefix with the previous request, in tokens.
    pub(crate) common: usize,
    /// `common / previous tokens` in percent (`None` for the first request).
    pub(crate) percent: Option<f64>,
}

/// The prefix shares of a sequence of request bodies.
pub(crate) fn shares(bpe: &O200k, bodies: &[&str]) -> Vec<Share> {
    let encoded: Vec<Vec<u32>> = bodies.iter().map(|b| tokens(bpe, b)).collect();
    encoded
        .iter()
        .enumerate()
        .map(|(i, current)| match i.checked_sub(1).map(|p| &encoded[p]) {
            None => Share {
                tokens: current.len(),
                common: 0,
                percent: None,
            },
            Some(previous) => {
                let common = common_prefix(previous, current);
                Share {
                    tokens: current.len(),
                    common,
                    percent: Some(percent(common, previous.len())),
                }
            }
        })
        .collect()
}

/// The shares of one run: (default mode, legacy mode).
pub(crate) fn measure(bpe: &O200k, outcome: &Outcome) -> (Vec<Share>, Vec<Share>) {
    (
        shares(bpe, &outcome.default_bodies()),
        shares(bpe, &outcome.legacy_bodies()),
    )
}

/// `part / whole` in percent.
pub(crate) fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 100.0;
    }
    // Token counts are far below 2^52, so the conversion is exact.
    #[allow(clippy::cast_precision_loss)]
    let ratio = part as f64 / whole as f64;
    100.0 * ratio
}

/// What the catalog costs in the stable system block.
#[derive(Debug, Clone)]
pub(crate) struct Overhead {
    /// Skills in the catalog.
    pub(crate) skills: usize,
    /// Tokens of all `<skill name="…">…</skill>` lines (each tokenized with
    /// its newline).
    pub(crate) line_tokens: usize,
    /// Tokens of the names and descriptions alone (each tokenized apart).
    pub(crate) content_tokens: usize,
    /// The most wrapper tokens of one skill.
    pub(crate) max_per_skill: usize,
    /// Tokens of the catalog part of the block with the skill lines removed:
    /// the guardrail sentence and the `<available_skills>` frame.
    pub(crate) fixed_tokens: usize,
    /// Tokens of the guardrail sentence alone.
    pub(crate) guardrail_tokens: usize,
    /// Tokens of the agent's instructions.
    pub(crate) instruction_tokens: usize,
    /// Tokens of the whole stable block.
    pub(crate) block_tokens: usize,
}

impl Overhead {
    /// Wrapper tokens per skill, on average.
    pub(crate) fn per_skill(&self) -> f64 {
        let wrapper = self.line_tokens.saturating_sub(self.content_tokens);
        #[allow(clippy::cast_precision_loss)]
        let per = wrapper as f64 / self.skills.max(1) as f64;
        per
    }
}

/// Measures the catalog in `stable_system` against the pinned entries.
pub(crate) fn catalog_overhead(
    bpe: &O200k,
    stable_system: &str,
    pinned: &[(String, String)],
) -> Overhead {
    let catalog = stable_system
        .strip_prefix(INSTRUCTIONS)
        .map_or(stable_system, |rest| rest.trim_start_matches('\n'));
    let mut line_tokens = 0;
    let mut content_tokens = 0;
    let mut max_per_skill = 0;
    let mut rest = String::new();
    let mut skills = 0;
    for line in catalog.split_inclusive('\n') {
        if !line.starts_with("<skill name=\"") {
            rest.push_str(line);
            continue;
        }
        let (name, description) = pinned
            .iter()
            .find(|(name, _)| line.starts_with(&format!("<skill name=\"{name}\">")))
            .expect("every catalog line names a pinned skill");
        let whole = bpe.count(line);
        let content = bpe.count(name) + bpe.count(description);
        line_tokens += whole;
        content_tokens += content;
        max_per_skill = max_per_skill.max(whole.saturating_sub(content));
        skills += 1;
    }
    let guardrail = catalog.lines().next().unwrap_or_default();
    Overhead {
        skills,
        line_tokens,
        content_tokens,
        max_per_skill,
        fixed_tokens: bpe.count(&rest),
        guardrail_tokens: bpe.count(guardrail),
        instruction_tokens: bpe.count(INSTRUCTIONS),
        block_tokens: bpe.count(stable_system),
    }
}

/// A Markdown table of the steps (`shares` per mode, as from [`shares`]).
pub(crate) fn table(steps: &[Step], default: &[Share], legacy: &[Share]) -> String {
    let mut out = String::from(
        "| step | what was appended since the previous request | tokens (default) | tokens \
         (legacy) | default mode | legacy mode |\n| ---: | --- | ---: | ---: | ---: | ---: |\n",
    );
    let cell = |share: &Share| match share.percent {
        Some(p) => format!("{p:.1} %"),
        None => "—".to_owned(),
    };
    for (i, ((step, d), l)) in steps.iter().zip(default).zip(legacy).enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            i + 1,
            step.label,
            d.tokens,
            l.tokens,
            cell(d),
            cell(l)
        );
    }
    out
}
