//! The read operation (`read_skill_file`, `skill_read`): one file of a skill,
//! or a line range of it.

use super::*;

impl Session {
    pub(super) async fn op_read(
        &mut self,
        call: &ToolCall,
        args: &ReadSkillFileArgs,
    ) -> Result<Message, ToolError> {
        let meta = self.meta(&args.skill, false)?;
        let name = meta.name.as_str().to_owned();
        record("skill", &name);
        record("path", &clip(&args.path));
        if args.path.len() > MAX_NAME_LEN * 4 {
            return Err(ToolError::new(
                ToolErrorKind::Resource,
                format!("the path `{}` is too long", clip(&args.path)),
            ));
        }
        let range = match (args.start_line, args.end_line) {
            (None, None) => None,
            (start, end) => Some(LineRange::new(start.unwrap_or(1), end).map_err(|err| {
                ToolError::new(
                    ToolErrorKind::InvalidArguments,
                    format!("bad line range: {}", err.message()),
                )
            })?),
        };
        let content = match self
            .agent
            .provider()
            .read_resource(&name, &args.path, range)
            .await
        {
            Ok(content) => content,
            Err(err) => {
                let mut error = resource_error(&err, &name, &args.path);
                // A missing file or a refused path (`..`, absolute): say
                // which files the skill has, so the model can correct itself.
                if matches!(
                    err.kind(),
                    ErrorKind::ResourceNotFound | ErrorKind::InvalidPath
                ) && err.available().is_empty()
                    && let Ok(skill) = self.agent.provider().get(&name).await
                {
                    let paths = skill.resources.paths();
                    error = ToolError::new(
                        ToolErrorKind::Resource,
                        format!(
                            "{}. Files of `{name}`: {}.",
                            error.message().trim_end_matches('.'),
                            if paths.is_empty() {
                                "none".to_owned()
                            } else {
                                paths.join(", ")
                            }
                        ),
                    );
                }
                return Err(error);
            }
        };
        let mut message =
            Message::tool_result(&call.id, &call.name, render::skill_file(&name, &content));
        if self.is_loaded(&name) {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }
}

pub(super) fn resource_error(err: &Error, skill: &str, path: &str) -> ToolError {
    let mut message = match err.kind() {
        ErrorKind::InvalidPath => format!(
            "`{}` is not a valid path inside the skill `{skill}`: {}",
            clip(path),
            err.message()
        ),
        ErrorKind::Binary => format!("`{}` is a binary file and cannot be shown", clip(path)),
        ErrorKind::TooLarge => format!("`{}` is too large to read: {}", clip(path), err.message()),
        ErrorKind::InvalidRange => format!("bad line range: {}", err.message()),
        ErrorKind::SkillNotFound => format!("no skill is named `{skill}`"),
        _ => err.message().to_owned(),
    };
    if !err.available().is_empty() {
        if !message.ends_with('.') {
            message.push('.');
        }
        message.push_str(&format!(" Available: {}.", err.available().join(", ")));
    }
    let kind = if err.kind() == ErrorKind::InvalidRange {
        ToolErrorKind::InvalidArguments
    } else {
        ToolErrorKind::Resource
    };
    ToolError::new(kind, message)
}
