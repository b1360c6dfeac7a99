//! Agents: their definitions (`AGENT.md`, `agents/<name>.md`).

mod definition;

pub use definition::AgentDefinition;
