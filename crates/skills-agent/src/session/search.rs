//! Skill search (`search_skills`) over the shared, content-keyed index
//! ([`Library`] answers it from the session's current catalog).

use crate::message::{Message, ToolCall};
use crate::surface::SearchArgs;
use crate::tool::ToolError;

use super::Session;

impl Session {
    pub(super) async fn op_search(
        &mut self,
        call: &ToolCall,
        args: SearchArgs,
    ) -> Result<Message, ToolError> {
        let text = self.library().search_with(&args).await?;
        Ok(Message::tool_result(&call.id, &call.name, text))
    }
}
