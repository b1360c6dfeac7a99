//! What a provider holds between queries: every row it has read, converted
//! once, and the kits built from them. Changed rows replace their entries;
//! only the kits they belong to are built again.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use skillkit_parser::Diagnostic;

use super::rows::{AgentRow, SkillRow};
use crate::agent_definition::AgentDefinition;
use crate::kit::Kit;
use crate::skill::Skill;

/// A converted row: what it serves (nothing when it is corrupt) and what is
/// wrong with it.
struct Entry<T> {
    value: Option<Arc<T>>,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Default)]
struct KitRows {
    /// By row name.
    skills: BTreeMap<String, Entry<Skill>>,
    /// The root agent rows (at most one is live, by the schema's index).
    roots: BTreeMap<String, Entry<AgentDefinition>>,
    /// The sub-agent rows, by row name.
    agents: BTreeMap<String, Entry<AgentDefinition>>,
    /// The kit built from the rows; `None` after a change.
    built: Option<Kit>,
}

impl KitRows {
    fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.roots.is_empty() && self.agents.is_empty()
    }

    fn build(&mut self, name: &str) -> &Kit {
        self.built.get_or_insert_with(|| {
            let mut diagnostics = problems(&self.skills);
            diagnostics.extend(problems(&self.roots));
            diagnostics.extend(problems(&self.agents));
            let root = live(&self.roots).into_iter().next().map(|(root, _)| root);
            let mut kit = Kit::assemble(
                Cow::Owned(name.to_owned()),
                root,
                live(&self.skills),
                live(&self.agents),
                diagnostics,
            );
            kit.metadata.insert("provider".into(), "sql".into());
            kit.origin = crate::kit::Origin::Database;
            kit
        })
    }
}

/// What is wrong with the rows of `entries`.
fn problems<T>(entries: &BTreeMap<String, Entry<T>>) -> Vec<Diagnostic> {
    entries
        .values()
        .flat_map(|e| e.diagnostics.iter().cloned())
        .collect()
}

/// The values of the rows of `entries` that are served (a row has no
/// `name:` line, so 0 for the kit rule's position).
fn live<T>(entries: &BTreeMap<String, Entry<T>>) -> Vec<(Arc<T>, usize)> {
    entries
        .values()
        .filter_map(|e| e.value.clone().map(|value| (value, 0)))
        .collect()
}

/// Every row read so far, as of [`Rows::state`].
#[derive(Default)]
pub(super) struct Rows {
    /// The store's revision and identity these rows are (`None` before the
    /// first read).
    pub(super) state: Option<(i64, String)>,
    kits: BTreeMap<String, KitRows>,
}

impl Rows {
    /// Applies the rows written since [`Rows::state`], up to `state`,
    /// logging what is wrong with each (once: when it is read).
    pub(super) fn apply(
        &mut self,
        provider: &str,
        state: (i64, String),
        skills: Vec<SkillRow>,
        agents: Vec<AgentRow>,
    ) {
        for row in skills {
            let kit = self.kits.entry(row.kit.clone()).or_default();
            kit.built = None;
            if row.deleted {
                kit.skills.remove(&row.name);
                continue;
            }
            let entry = match row.skill() {
                Ok((skill, warnings)) => Entry {
                    value: Some(Arc::new(skill)),
                    diagnostics: warnings,
                },
                Err(error) => Entry {
                    value: None,
                    diagnostics: vec![error],
                },
            };
            log(provider, &row.kit, &entry.diagnostics);
            kit.skills.insert(row.name, entry);
        }
        for row in agents {
            let kit = self.kits.entry(row.kit.clone()).or_default();
            kit.built = None;
            let entries = match row.root {
                true => &mut kit.roots,
                false => &mut kit.agents,
            };
            if row.deleted {
                entries.remove(&row.name);
                continue;
            }
            let entry = match row.agent() {
                Ok(agent) => Entry {
                    value: Some(Arc::new(agent)),
                    diagnostics: Vec::new(),
                },
                Err(error) => Entry {
                    value: None,
                    diagnostics: vec![error],
                },
            };
            log(provider, &row.kit, &entry.diagnostics);
            entries.insert(row.name, entry);
        }
        self.kits.retain(|_, kit| !kit.is_empty());
        self.state = Some(state);
    }

    /// The kits, sorted by name, each stamped with the revision they are.
    pub(super) fn kits(&mut self) -> Vec<Kit> {
        let revision = self.state.as_ref().map_or(0, |(revision, _)| *revision);
        self.kits
            .iter_mut()
            .map(|(name, rows)| {
                let mut kit = rows.build(name).clone();
                kit.metadata.insert("revision".into(), revision.into());
                kit
            })
            .collect()
    }
}

fn log(provider: &str, kit: &str, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        let row = d.path.as_ref().map(|p| p.display().to_string());
        let skipped = if d.is_error() { "row skipped: " } else { "" };
        tracing::warn!(
            provider,
            kit,
            row = row.as_deref(),
            "{skipped}{}",
            d.message
        );
    }
}
