//! [`Kit`]: a named bundle of skills, a root agent, sub-agents and metadata.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use skillkit_parser::{Diagnostic, Severity, kit as kit_rule};

use crate::agent_definition::AgentDefinition;
use crate::skill::{Metadata, Skill};

/// A named bundle of skills and agents, as a provider serves it.
///
/// Skills and agents are behind `Arc`, and the list of skills is shared, so
/// cloning a kit (which every provider's answer and every catalog query does)
/// costs the same for ten skills as for ten thousand and copies no text. To
/// edit the list of a kit, use [`Kit::insert_skill`] or [`Skills::make_mut`],
/// which copy the list only if another clone still holds it.
///
/// ```
/// use skillkit::{Kit, Skill};
///
/// let kit = Kit::new("files")
///     .with_skill(Skill::new("files:write", "Write a file."))
///     .with_skill(Skill::new("files:read", "Read a file."));
/// assert_eq!(kit.skill("files:read").unwrap().description, "Read a file.");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Kit {
    /// The kit's name (the `<kit>` of `<kit>:<skill>`).
    pub name: Cow<'static, str>,
    /// The skills, sorted by full name (shared between clones: see [`Skills`]).
    pub skills: Skills,
    /// The root agent (`AGENT.md`).
    pub agent: Option<Arc<AgentDefinition>>,
    /// The sub-agents (`agents/<name>.md`), sorted by name.
    pub agents: Vec<Arc<AgentDefinition>>,
    /// Anything the provider wants to say about the kit (source, commit, …).
    pub metadata: Metadata,
    /// Problems met while loading the kit: skipped files, duplicate names.
    pub diagnostics: Vec<Diagnostic>,
    /// Where the kit comes from, which decides whether the powers its skills
    /// ask for (`allowed-tools`) are granted without asking.
    pub origin: Origin,
}

/// Where a kit comes from. Kits the application chose (compiled in, built in
/// code, a folder it named) and the user's own folder are
/// [trusted](Origin::is_trusted); kits found in a project (a repository just
/// cloned can ship `.claude/skills`), imported or read from a store are not,
/// until the application trusts them (the agent's
/// [`AgentOptions::trust`](crate::agent::AgentOptions::trust)). Untrusted
/// skills still load and can be read and activated; they get no
/// pre-approved tools.
///
/// ```
/// use skillkit::{Kit, Origin};
/// assert_eq!(Kit::new("k").origin, Origin::Application);
/// assert!(Origin::Embedded.is_trusted());
/// assert!(!Origin::Project.is_trusted());
/// assert!(!Origin::Mcp.is_trusted());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Origin {
    /// Compiled into the binary (`#[derive(Kit)]`).
    Embedded,
    /// Given by the application: built in code, put into a
    /// [`Memory`](crate::Memory), or a [`Local`](crate::Local) folder it
    /// named.
    #[default]
    Application,
    /// Found by [`Local::discover`](crate::Local::discover) in the user's
    /// home folder (`~/.agents/skills`, `~/.claude/skills`).
    User,
    /// Found by [`Local::discover`](crate::Local::discover) in a project
    /// (`.agents/skills`, `.claude/skills` from the working folder up to the
    /// repository root).
    Project,
    /// Imported from GitHub.
    GitHub,
    /// Read from a database ([`Sql`](crate::providers::Sql)).
    Database,
    /// Served by an MCP server (the `McpSkills` provider, feature `mcp-client`):
    /// each server is an origin of its own, under the kit name the
    /// application gives it.
    Mcp,
}

impl Origin {
    /// Whether kits of this origin are trusted unless the application says
    /// otherwise: [`Embedded`](Origin::Embedded),
    /// [`Application`](Origin::Application) and [`User`](Origin::User).
    ///
    /// ```
    /// assert!(skillkit::Origin::User.is_trusted());
    /// assert!(!skillkit::Origin::GitHub.is_trusted());
    /// ```
    pub fn is_trusted(self) -> bool {
        matches!(self, Origin::Embedded | Origin::Application | Origin::User)
    }
}

/// The skills of a [`Kit`]: a list shared between the clones of a kit, so
/// cloning one is as cheap at ten thousand skills as at ten.
///
/// It reads as a slice (`len`, `iter`, indexing, `for skill in &kit.skills`);
/// [`Skills::make_mut`] edits it, copying the list first only if another
/// clone still holds it.
///
/// ```
/// use skillkit::{Kit, Skill};
/// use skillkit::kit::Skills;
///
/// let kit = Kit::new("k").with_skill(Skill::new("k:a", "d"));
/// let mut copy = kit.clone();
/// assert!(Skills::ptr_eq(&kit.skills, &copy.skills));
/// copy.skills.make_mut().clear(); // copies the list; `kit` keeps its skill
/// assert_eq!((kit.skills.len(), copy.skills.len()), (1, 0));
/// for skill in &kit.skills {
///     assert_eq!(skill.name, "k:a");
/// }
/// ```
#[derive(Clone, Default)]
pub struct Skills(Arc<List>);

/// The list of a [`Skills`], and what was learnt of its order.
#[derive(Clone, Default)]
struct List {
    skills: Vec<Arc<Skill>>,
    /// The kit prefix every name carries when the names are sorted strictly
    /// (`None` when they are not, or do not share one), found once per
    /// list: the catalog asks on every query.
    prefix: OnceLock<Option<Box<str>>>,
    /// Whether the names are sorted strictly, found once per list (and kept
    /// by [`Kit::insert_skill`], which inserts in order), so a name that
    /// is not there is known absent by a binary search alone.
    sorted: OnceLock<bool>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Skills").field(&self.0.skills).finish()
    }
}

impl Skills {
    /// The list, to edit: copied first if another clone holds it too.
    ///
    /// ```
    /// let mut skills = skillkit::kit::Skills::default();
    /// skills.make_mut().push(skillkit::Skill::new("k:a", "d").into());
    /// assert_eq!(skills.len(), 1);
    /// ```
    pub fn make_mut(&mut self) -> &mut Vec<Arc<Skill>> {
        let list = Arc::make_mut(&mut self.0);
        list.prefix = OnceLock::new();
        list.sorted = OnceLock::new();
        &mut list.skills
    }

    /// Whether the names are sorted strictly (checked once per list).
    fn sorted(&self) -> bool {
        *self
            .0
            .sorted
            .get_or_init(|| self.0.skills.windows(2).all(|w| w[0].name < w[1].name))
    }

    /// Whether every name is `<kit>:<skill>` and the names are sorted
    /// strictly, so no two are the same (as every provider of this crate
    /// serves a kit). Checked once per list, not once per query.
    pub(crate) fn sorted_under(&self, kit: &str) -> bool {
        let prefix = self.0.prefix.get_or_init(|| {
            let skills = &self.0.skills;
            let first = skillkit_parser::name::split(&skills.first()?.name).0?;
            let prefixed = |name: &str| {
                name.strip_prefix(first)
                    .is_some_and(|rest| rest.starts_with(skillkit_parser::name::SEPARATOR))
            };
            let sorted = skills.windows(2).all(|w| w[0].name < w[1].name);
            (sorted && skills.iter().all(|s| prefixed(&s.name))).then(|| first.into())
        });
        self.0.skills.is_empty() || prefix.as_deref() == Some(kit)
    }

    /// Whether `a` and `b` share one list (one is a clone of the other, and
    /// neither was edited since).
    ///
    /// ```
    /// let a = skillkit::kit::Skills::from(vec![skillkit::Skill::new("k:a", "d").into()]);
    /// assert!(skillkit::kit::Skills::ptr_eq(&a, &a.clone()));
    /// ```
    pub fn ptr_eq(a: &Skills, b: &Skills) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl std::ops::Deref for Skills {
    type Target = [Arc<Skill>];

    fn deref(&self) -> &[Arc<Skill>] {
        &self.0.skills
    }
}

impl From<Vec<Arc<Skill>>> for Skills {
    fn from(skills: Vec<Arc<Skill>>) -> Self {
        Skills(Arc::new(List {
            skills,
            prefix: OnceLock::new(),
            sorted: OnceLock::new(),
        }))
    }
}

impl FromIterator<Arc<Skill>> for Skills {
    fn from_iter<I: IntoIterator<Item = Arc<Skill>>>(iter: I) -> Self {
        Skills::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Skills {
    type Item = &'a Arc<Skill>;
    type IntoIter = std::slice::Iter<'a, Arc<Skill>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.skills.iter()
    }
}

impl Kit {
    /// An empty kit.
    ///
    /// ```
    /// assert!(skillkit::Kit::new("files").skills.is_empty());
    /// ```
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        Kit {
            name: name.into(),
            ..Kit::default()
        }
    }

    /// The same kit with `skill` added (kept sorted by name; a skill of the same
    /// name is replaced).
    ///
    /// ```
    /// let kit = skillkit::Kit::new("k")
    ///     .with_skill(skillkit::Skill::new("k:b", "d"))
    ///     .with_skill(skillkit::Skill::new("k:a", "d"));
    /// assert_eq!(kit.skills[0].name, "k:a");
    /// ```
    pub fn with_skill(mut self, skill: impl Into<Arc<Skill>>) -> Self {
        self.insert_skill(skill);
        self
    }

    /// Adds `skill` (kept sorted by name; a skill of the same name is replaced).
    ///
    /// ```
    /// let mut kit = skillkit::Kit::new("k");
    /// kit.insert_skill(skillkit::Skill::new("k:a", "First."));
    /// kit.insert_skill(skillkit::Skill::new("k:a", "Second."));
    /// assert_eq!(kit.skills[0].description, "Second.");
    /// ```
    pub fn insert_skill(&mut self, skill: impl Into<Arc<Skill>>) {
        let skill = skill.into();
        let at = self.skill_index(&skill.name);
        let sorted = self.skills.sorted();
        let skills = self.skills.make_mut();
        match at {
            Some(at) => skills[at] = skill,
            None => {
                let at = skills.partition_point(|s| s.name < skill.name);
                skills.insert(at, skill);
            }
        }
        // Inserted in order (or replaced in place): a sorted list stays
        // sorted, so the next insert searches it by halves only.
        if sorted {
            let _ = Arc::make_mut(&mut self.skills.0).sorted.set(true);
        }
    }

    /// The same kit with `origin`.
    ///
    /// ```
    /// let kit = skillkit::Kit::new("k").with_origin(skillkit::Origin::Project);
    /// assert_eq!(kit.origin, skillkit::Origin::Project);
    /// ```
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// The same kit with `agent` as its root agent.
    ///
    /// ```
    /// let kit = skillkit::Kit::new("k").with_agent(skillkit::AgentDefinition::new("k", "d"));
    /// assert!(kit.agent.is_some());
    /// ```
    pub fn with_agent(mut self, agent: impl Into<Arc<AgentDefinition>>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// The same kit with sub-agent `agent` added (kept sorted by name).
    ///
    /// ```
    /// let kit = skillkit::Kit::new("k").with_sub_agent(skillkit::AgentDefinition::new("k:sum", "d"));
    /// assert_eq!(kit.agents.len(), 1);
    /// ```
    pub fn with_sub_agent(mut self, agent: impl Into<Arc<AgentDefinition>>) -> Self {
        let agent = agent.into();
        match self.agents.binary_search_by(|a| a.name.cmp(&agent.name)) {
            Ok(at) => self.agents[at] = agent,
            Err(at) => self.agents.insert(at, agent),
        }
        self
    }

    /// The skill with full name `name`.
    ///
    /// ```
    /// let kit = skillkit::Kit::new("k").with_skill(skillkit::Skill::new("k:a", "d"));
    /// assert!(kit.skill("k:a").is_some());
    /// assert!(kit.skill("k:b").is_none());
    /// ```
    pub fn skill(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skill_index(name).map(|at| &self.skills[at])
    }

    /// Where skill `name` is in [`Kit::skills`]: found by binary search when the
    /// skills are sorted (as every provider of this crate keeps them), else by a
    /// scan.
    pub(crate) fn skill_index(&self, name: &str) -> Option<usize> {
        match self.skills.binary_search_by(|s| s.name.as_ref().cmp(name)) {
            Ok(at) => Some(at),
            // Sorted: a miss is an answer.
            Err(_) if self.skills.sorted() => None,
            Err(_) => self.skills.iter().position(|s| s.name == name),
        }
    }

    /// Builds a kit from loaded parts, each with the line of its `name:` key:
    /// skills sorted by name, and of two skills (or sub-agents) with the same
    /// name the first (by file path) kept and the other reported in
    /// [`Kit::diagnostics`] (the parser crate's kit rule).
    pub(crate) fn assemble(
        name: Cow<'static, str>,
        agent: Option<Arc<AgentDefinition>>,
        mut skills: Vec<(Arc<Skill>, usize)>,
        mut agents: Vec<(Arc<AgentDefinition>, usize)>,
        mut diagnostics: Vec<Diagnostic>,
    ) -> Kit {
        diagnostics.extend(kit_rule::dedup(
            &mut skills,
            "skill",
            Severity::Warning,
            |(s, line)| declared(&s.name, s.location.as_deref(), *line),
        ));
        diagnostics.extend(kit_rule::dedup(
            &mut agents,
            "agent",
            Severity::Warning,
            |(a, line)| declared(&a.name, a.location.as_deref(), *line),
        ));
        Kit {
            name,
            skills: skills.into_iter().map(|(s, _)| s).collect(),
            agent,
            agents: agents.into_iter().map(|(a, _)| a).collect(),
            metadata: Metadata::new(),
            diagnostics,
            origin: Origin::default(),
        }
    }
}

fn declared<'a>(
    name: &'a str,
    path: Option<&'a std::path::Path>,
    line: usize,
) -> kit_rule::Declared<'a> {
    kit_rule::Declared { name, path, line }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_in_any_order_keep_the_skills_sorted_and_replace_by_name() {
        let mut kit = Kit::new("k");
        // A fixed shuffle of 2,000 names (a stride coprime with the count).
        let names: Vec<String> = (0..2000)
            .map(|i| format!("k:s{:04}", (i * 7919) % 2000))
            .collect();
        for name in &names {
            kit.insert_skill(Skill::new(name.clone(), "first"));
        }
        assert_eq!(kit.skills.len(), 2000);
        assert!(kit.skills.windows(2).all(|w| w[0].name < w[1].name));
        assert!(kit.skills.sorted());
        kit.insert_skill(Skill::new("k:s0042", "second"));
        assert_eq!(kit.skills.len(), 2000);
        assert_eq!(kit.skill("k:s0042").unwrap().description, "second");
    }

    #[test]
    fn an_unsorted_list_is_still_searched_whole() {
        let mut kit = Kit::new("k");
        kit.skills = Skills::from(vec![
            Arc::new(Skill::new("k:b", "d")),
            Arc::new(Skill::new("k:a", "d")),
        ]);
        assert_eq!(kit.skill_index("k:a"), Some(1));
        kit.insert_skill(Skill::new("k:a", "replaced"));
        assert_eq!(kit.skills[1].description, "replaced");
    }
}
