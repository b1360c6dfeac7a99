//! Delegation: a sub-agent run on `{task}` to its answer, one level deeper;
//! and a forked skill (`context: fork`), run the same way with its rendered
//! body as the task.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::History;
use crate::agent::run::{AgentRun, Model, Outcome};
use crate::agent_definition::AgentDefinition;
use crate::skill::Skill;

impl AgentRun {
    /// Runs sub-agent `definition` on `{task}` to its answer.
    pub(super) async fn delegate(
        &self,
        definition: &Arc<AgentDefinition>,
        input: &Value,
    ) -> Result<String, String> {
        let task = input
            .get("task")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let what = format!("sub-agent `{}`", definition.name);
        self.run_child(definition, &definition.name, &what, task, None)
            .await
    }

    /// Runs skill `skill` (`context: fork`) on `body`, its rendered body, in
    /// a sub-agent without this conversation's history: the agent its
    /// `agent:` names (else one named after the skill, with no instructions
    /// of its own), on the model its `model:` names (else that agent's, else
    /// this one's).
    pub(super) async fn fork(&self, skill: &Skill, body: &str) -> Result<String, String> {
        let definition = match skill.fork_agent() {
            Some(name) => {
                let snapshot = self.runtime.catalog.snapshot().await;
                let in_kit = skill.kit().map(|kit| format!("{kit}:{name}"));
                let found = snapshot
                    .agent(name)
                    .or_else(|| in_kit.as_deref().and_then(|full| snapshot.agent(full)));
                match found {
                    Some(agent) => Arc::clone(agent),
                    None => {
                        return Err(format!(
                            "skill `{}` runs as agent `{name}` (its `agent:`), which no kit of \
                             the catalog has; activate another skill or do the task yourself",
                            skill.name
                        ));
                    }
                }
            }
            None => Arc::new(AgentDefinition::new(
                skill.name.clone(),
                skill.description.clone(),
            )),
        };
        let model = match skill.model().map(str::trim) {
            None | Some("" | "inherit") => None,
            Some(uri) => Some(
                Model::resolve(&self.runtime.registry, &skill.name, uri).map_err(|e| {
                    format!(
                        "skill `{}` runs on model `{uri}` (its `model:`), which cannot be used: \
                         {e}",
                        skill.name
                    )
                })?,
            ),
        };
        let what = format!("forked skill `{}`", skill.name);
        self.run_child(&definition, &skill.name, &what, body, model)
            .await
    }

    /// Runs `definition` one level deeper, at path name `name`, on `task`
    /// with an empty history, to its answer; `what` names it in errors.
    async fn run_child(
        &self,
        definition: &Arc<AgentDefinition>,
        name: &str,
        what: &str,
        task: &str,
        model: Option<Model>,
    ) -> Result<String, String> {
        let depth = self.path.depth() as u32;
        if depth >= self.runtime.max_depth {
            return Err(format!(
                "cannot run {what}: sub-agents may nest {} deep (max_agent_depth) and this agent \
                 is at depth {depth}; do the task yourself",
                self.runtime.max_depth
            ));
        }
        let model = match (model, &definition.model) {
            (Some(model), _) => model,
            (None, Some(uri)) => Model::resolve(&self.runtime.registry, &definition.name, uri)
                .map_err(|e| e.to_string())?,
            (None, None) => self.model.clone(),
        };
        let mut child = AgentRun::new(
            Arc::clone(&self.runtime),
            Arc::clone(definition),
            self.path.child(name),
            model,
        );
        let history = Mutex::new(History {
            session_id: self.runtime.session_id.clone(),
            messages: Vec::new(),
        });
        // The parent's cancellation reaches the child through the select in
        // `call`, which drops this future.
        let never = CancellationToken::new();
        match Box::pin(child.answer(&history, task.to_owned(), &never, None)).await {
            Outcome::Answered(text) => Ok(text),
            Outcome::Failed(error) => Err(format!("{what} failed: {error}")),
            Outcome::Cancelled => Err(format!("{what} was stopped")),
        }
    }
}
