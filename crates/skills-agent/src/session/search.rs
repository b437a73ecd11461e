//! Skill search (`search_skills`) over the shared, content-keyed index.

use super::*;

impl Session {
    pub(super) async fn op_search(
        &mut self,
        call: &ToolCall,
        args: SearchArgs,
    ) -> Result<Message, ToolError> {
        if args.query.len() > MAX_QUERY_LEN {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "the query is too long ({} bytes; at most {MAX_QUERY_LEN})",
                    args.query.len()
                ),
            ));
        }
        tracing::Span::current().record("query_bytes", args.query.len());
        let limit = args.limit.unwrap_or(5).clamp(1, MAX_SEARCH_LIMIT);
        let index = self.search_index().await;
        let hits: Vec<(String, String, f64)> = index
            .search(&args.query, limit)
            .into_iter()
            .filter_map(|hit| {
                self.current
                    .get(&hit.name)
                    .filter(|m| !m.extensions.disable_model_invocation)
                    .map(|m| (hit.name.clone(), m.description.clone(), hit.score))
            })
            .collect();
        tracing::Span::current().record("hits", hits.len());
        let text = render::search_results(&args.query, &hits, self.agent.surface().load_tool());
        Ok(Message::tool_result(&call.id, &call.name, text))
    }

    /// The search index for the current catalog as of the session's last
    /// look at the library (see [`crate::search`]).
    pub(super) async fn search_index(&self) -> Arc<SearchIndex> {
        let cache = Arc::clone(self.agent.search_cache());
        cache
            .index(self.agent.provider(), &self.current, self.listed_at)
            .await
    }
}
