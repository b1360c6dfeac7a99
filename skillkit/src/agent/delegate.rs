//! Delegation: a sub-agent run on `{task}` to its answer, one level deeper.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::run::{AgentRun, Model, Outcome, max_turns};
use crate::agent::{AgentDefinition, History};
use crate::llm::Usage;

impl AgentRun {
    /// Runs sub-agent `definition` on `{task}` to its answer.
    pub(super) async fn delegate(
        &self,
        definition: &Arc<AgentDefinition>,
        input: &Value,
    ) -> Result<String, String> {
        let depth = self.path.depth() as u32;
        if depth >= self.runtime.max_depth {
            return Err(format!(
                "cannot delegate to `{}`: sub-agents may nest {} deep (max_agent_depth) and \
                 this agent is at depth {depth}; do the task yourself",
                definition.name, self.runtime.max_depth
            ));
        }
        let task = input
            .get("task")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let model = match &definition.model {
            Some(uri) => Model::resolve(&self.runtime.registry, &definition.name, uri)
                .map_err(|e| e.to_string())?,
            None => self.model.clone(),
        };
        let mut child = AgentRun {
            runtime: Arc::clone(&self.runtime),
            definition: Arc::clone(definition),
            path: self.path.child(&definition.name),
            model,
            max_turns: max_turns(&self.runtime, definition),
            total: Usage::default(),
            tools: Default::default(),
        };
        let history = Mutex::new(History {
            session_id: self.runtime.session_id.clone(),
            messages: Vec::new(),
        });
        // The parent's cancellation reaches the child through the select in
        // `call`, which drops this future.
        let never = CancellationToken::new();
        match Box::pin(child.answer(&history, task.to_owned(), &never)).await {
            Outcome::Answered(text) => Ok(text),
            Outcome::Failed(error) => {
                Err(format!("sub-agent `{}` failed: {error}", definition.name))
            }
            Outcome::Cancelled => Err(format!("sub-agent `{}` was stopped", definition.name)),
        }
    }
}
