//! The read operation (`read_skill_file`, `skill_read`): one file of a skill,
//! or a line range of it ([`Library`] reads it; the session marks a loaded
//! skill as used).

use serde_json::Value;

use crate::message::{Message, TOUCH_KEY, ToolCall};
use crate::surface::ReadSkillFileArgs;
use crate::tool::ToolError;

use super::Session;

impl Session {
    pub(super) async fn op_read(
        &mut self,
        call: &ToolCall,
        args: &ReadSkillFileArgs,
    ) -> Result<Message, ToolError> {
        let (name, text) = self
            .library()
            .read_args(args, self.is_loaded(&args.skill))
            .await?;
        let mut message = Message::tool_result(&call.id, &call.name, text);
        if self.is_loaded(&name) {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }
}
