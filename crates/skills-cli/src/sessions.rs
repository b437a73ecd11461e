//! `skills sessions`: what a session store holds (`list`, `show`), and the
//! store side of `skills agent --session URL`.
//!
//! Stores are opened by URL (`sqlite://PATH`, `postgres://…`) through
//! `skills_store::open_store`. Text output escapes everything that comes from
//! the store (it holds model output); `--json` prints the store's own shapes.

use std::io::Write;
use std::sync::Arc;

use skills_agent::{
    Message, Role, SessionEvent, SessionInfo, SessionStore, StoreError, StoreErrorKind, StoredEvent,
};

use crate::failure::Failure;
use crate::text;

/// The session `skills agent --session URL` continues unless
/// `--session-id` names another.
pub(crate) const DEFAULT_SESSION_ID: &str = "default";

/// `skills sessions …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SessionsCommand {
    /// List the sessions in a store: id, agent, events, parent.
    List {
        /// The store: `sqlite://PATH` or `postgres://USER@HOST[:PORT]/DB`.
        url: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print one session's log as a transcript (without ID: the only
    /// session in the store).
    Show {
        /// The store: `sqlite://PATH` or `postgres://USER@HOST[:PORT]/DB`.
        url: String,
        /// The session's id.
        id: Option<String>,
        /// Print the session and its events as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Self {
        let code = match err.kind() {
            StoreErrorKind::Conflict | StoreErrorKind::Corrupt | StoreErrorKind::Provider => 1,
            _ => 2,
        };
        Failure {
            code,
            message: err.to_string(),
            broken_pipe: false,
        }
    }
}

/// Opens the store `url` names.
pub(crate) async fn open(url: &str) -> Result<Arc<dyn SessionStore>, Failure> {
    Ok(skills_store::open_store(url).await?)
}

/// Refuses a `sqlite://` URL whose file does not exist: reading a store must
/// not create one (a mistyped path would list "no sessions" and leave an
/// empty database behind).
fn existing(url: &str) -> Result<(), Failure> {
    if let Ok(skills_store::StoreUrl::Sqlite(path)) = skills_store::StoreUrl::parse(url)
        && !path.exists()
    {
        return Err(Failure::usage(format!(
            "no session store at {}: the SQLite file does not exist (`skills agent --session \
             {url}` creates it)",
            path.display()
        )));
    }
    Ok(())
}

/// Runs `skills sessions …`; returns the exit code.
pub(crate) fn run<W: Write>(command: SessionsCommand, out: &mut W) -> Result<u8, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::usage(format!("cannot start the async runtime: {err}")))?;
    match command {
        SessionsCommand::List { url, json } => {
            existing(&url)?;
            let sessions = runtime
                .block_on(async { open(&url).await?.list().await.map_err(Failure::from) })?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &sessions)
                    .map_err(crate::failure::json_failure)?;
                writeln!(out)?;
            } else {
                write_table(out, &sessions)?;
            }
        }
        SessionsCommand::Show { url, id, json } => {
            existing(&url)?;
            let (info, events) = runtime.block_on(async {
                let store = open(&url).await?;
                let id = match id {
                    Some(id) => id,
                    None => only_session(&*store).await?,
                };
                let info = store.info(&id).await?;
                let events = store.read(&id, 0).await?;
                Ok::<_, Failure>((info, events))
            })?;
            if json {
                let value = serde_json::json!({"session": info, "events": events});
                serde_json::to_writer_pretty(&mut *out, &value)
                    .map_err(crate::failure::json_failure)?;
                writeln!(out)?;
            } else {
                write_transcript(out, &info, &events)?;
            }
        }
    }
    Ok(0)
}

/// The id of the store's only session, or a usage error naming them.
async fn only_session(store: &dyn SessionStore) -> Result<String, Failure> {
    let sessions = store.list().await?;
    match sessions.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(Failure {
            code: 1,
            message: "the store holds no session".to_owned(),
            broken_pipe: false,
        }),
        many => {
            let ids: Vec<&str> = many.iter().take(20).map(|s| s.id.as_str()).collect();
            Err(Failure::usage(format!(
                "the store holds {} sessions; name one: {}{}",
                many.len(),
                ids.join(", "),
                if many.len() > ids.len() { ", …" } else { "" }
            )))
        }
    }
}

fn parent_text(info: &SessionInfo) -> String {
    info.parent
        .as_ref()
        .map_or_else(|| "-".to_owned(), |p| format!("{}@{}", p.session, p.seq))
}

fn write_table<W: Write>(out: &mut W, sessions: &[SessionInfo]) -> std::io::Result<()> {
    if sessions.is_empty() {
        return writeln!(out, "no sessions");
    }
    let rows: Vec<[String; 4]> = sessions
        .iter()
        .map(|s| {
            [
                text::line(&s.id).into_owned(),
                text::line(&s.agent).into_owned(),
                s.next_seq.to_string(),
                text::line(&parent_text(s)).into_owned(),
            ]
        })
        .collect();
    let header = ["ID", "AGENT", "EVENTS", "PARENT"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 4]| {
        format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        )
    };
    writeln!(out, "{}", line(header).trim_end())?;
    for row in &rows {
        writeln!(
            out,
            "{}",
            line([&row[0], &row[1], &row[2], &row[3]]).trim_end()
        )?;
    }
    Ok(())
}

fn role_name(message: &Message) -> &'static str {
    match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::System => "notice",
    }
}

/// Writes `text` indented by four spaces, control characters escaped.
fn write_indented<W: Write>(out: &mut W, body: &str) -> std::io::Result<()> {
    for line in text::block(body).lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

fn write_transcript<W: Write>(
    out: &mut W,
    info: &SessionInfo,
    events: &[StoredEvent],
) -> std::io::Result<()> {
    write!(
        out,
        "session {} (agent {}, {} events",
        text::line(&info.id),
        text::line(&info.agent),
        info.next_seq
    )?;
    if let Some(parent) = &info.parent {
        write!(
            out,
            ", forked from {} at {}",
            text::line(&parent.session),
            parent.seq
        )?;
    }
    writeln!(out, ")")?;
    for stored in events {
        let seq = stored.seq;
        match &stored.event {
            SessionEvent::Started { agent, catalog } => {
                let names: Vec<&str> = catalog.names().collect();
                writeln!(
                    out,
                    "#{seq} started: agent {}, pinned catalog of {} skills: {}",
                    text::line(agent),
                    names.len(),
                    text::line(&names.join(", "))
                )?;
            }
            SessionEvent::Message { message } => {
                let mut head = format!("#{seq} {}", role_name(message));
                if let Some(tool) = &message.tool_name {
                    head.push(' ');
                    head.push_str(&text::line(tool));
                }
                if message.is_error {
                    head.push_str(" (error)");
                }
                writeln!(out, "{head}:")?;
                write_indented(out, &message.content)?;
                for call in &message.tool_calls {
                    // OpenAI sends arguments as a JSON string: show it as is.
                    let arguments = match &call.arguments {
                        serde_json::Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    writeln!(
                        out,
                        "    -> {} {}",
                        text::line(&call.name),
                        text::line(&arguments)
                    )?;
                }
            }
            SessionEvent::LoadState { loaded } => {
                writeln!(out, "#{seq} loaded: {}", text::line(&loaded.join(", ")))?;
            }
            SessionEvent::Usage { usage } => writeln!(
                out,
                "#{seq} usage: {} tokens in ({} cached), {} out",
                usage.input_tokens, usage.cache_read_tokens, usage.output_tokens
            )?,
            // `SessionEvent` is non-exhaustive: name what a newer writer added.
            other => writeln!(out, "#{seq} {}", other.type_name())?,
        }
    }
    Ok(())
}
