//! [`Snapshot`]: the answer of all providers to one query, aggregated.

use std::sync::Arc;

use skillkit_parser::Diagnostic;

use crate::agent_definition::AgentDefinition;
use crate::catalog::{ProviderFailure, SkillSummary};
use crate::kit::Kit;
use crate::provider::KitProvider;
use crate::skill::Skill;
use crate::tool::Tool;

/// One skill of a [`Snapshot`], with its kit and the tool its provider binds
/// to it (`None` for a knowledge skill).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::{Catalog, Memory, Skill, Tool, ToolExecution, ToolOutcome};
/// struct Echo;
/// #[skillkit::async_trait]
/// impl Tool for Echo {
///     async fn execute(&self, e: ToolExecution) -> ToolOutcome { ToolOutcome::ok(e.arguments()) }
/// }
/// let memory = Memory::new();
/// memory.put_tool(Skill::new("util:echo", "Echo."), Echo);
/// memory.put(Skill::new("util:guide", "How to echo."));
/// let snapshot = Catalog::builder().provider(memory).build().snapshot().await;
/// let executable: Vec<_> = snapshot.entries().filter(|e| e.tool.is_some()).map(|e| e.skill.name.to_string()).collect();
/// assert_eq!(executable, ["util:echo"]);
/// # });
/// ```
#[derive(Clone)]
pub struct Entry<'a> {
    /// The kit the skill belongs to.
    pub kit: &'a Kit,
    /// The skill.
    pub skill: &'a Arc<Skill>,
    /// The code that executes it, when it is executable.
    pub tool: Option<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Entry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("kit", &self.kit.name)
            .field("skill", &self.skill.name)
            .field("executable", &self.tool.is_some())
            .finish()
    }
}

/// The answer of all providers to one query, aggregated.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let memory = skillkit::Memory::new();
/// memory.put(skillkit::Skill::new("a:x", "X."));
/// let snapshot = skillkit::Catalog::builder().provider(memory).build().snapshot().await;
/// assert_eq!(snapshot.kits().len(), 1);
/// assert!(snapshot.skill("a:x").is_some());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Snapshot {
    pub(super) kits: Vec<Kit>,
    /// For each kit, the index of its provider.
    pub(super) kit_providers: Vec<usize>,
    pub(super) providers: Vec<Arc<dyn KitProvider>>,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) failures: Vec<ProviderFailure>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("kits", &self.kits)
            .field("diagnostics", &self.diagnostics)
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}
impl Snapshot {
    /// Whether no two skills can share a full name, checked without hashing
    /// every name: kit names are distinct, and each kit's skills are sorted
    /// strictly and carry its own prefix (as every provider of this crate
    /// serves them). When this does not hold, the catalog looks for
    /// duplicates name by name.
    pub(super) fn names_are_unique(&self) -> bool {
        let mut kits: Vec<&str> = self.kits.iter().map(|k| k.name.as_ref()).collect();
        kits.sort_unstable();
        if kits.windows(2).any(|w| w[0] == w[1]) {
            return false;
        }
        // Learnt once per skill list, so an unchanged catalog costs one
        // look per kit here.
        self.kits
            .iter()
            .all(|kit| kit.skills.sorted_under(&kit.name))
    }

    /// Every kit with the index of its provider in the catalog.
    pub(crate) fn kits_with_providers(&self) -> impl Iterator<Item = (usize, &Kit)> {
        self.kit_providers.iter().copied().zip(&self.kits)
    }

    /// Every kit, in provider order (shadowed duplicate skills removed).
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().kits().is_empty());
    /// ```
    pub fn kits(&self) -> &[Kit] {
        &self.kits
    }

    /// The first kit named `name`.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().kit("files").is_none());
    /// ```
    pub fn kit(&self, name: &str) -> Option<&Kit> {
        self.kits.iter().find(|kit| kit.name == name)
    }

    /// Every skill, kit by kit.
    ///
    /// ```
    /// assert_eq!(skillkit::Snapshot::default().skills().count(), 0);
    /// ```
    pub fn skills(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.kits.iter().flat_map(|kit| &kit.skills)
    }

    /// Every skill's name and description.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().summaries().is_empty());
    /// ```
    pub fn summaries(&self) -> Vec<SkillSummary> {
        self.skills()
            .map(|s| SkillSummary {
                name: s.name.to_string(),
                description: s.description.to_string(),
            })
            .collect()
    }

    /// The skill with full name `name`.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().skill("a:b").is_none());
    /// ```
    pub fn skill(&self, name: &str) -> Option<&Arc<Skill>> {
        let (kit, skill) = self.locate(name)?;
        self.kits[kit].skills.get(skill)
    }

    /// The kit and skill indexes of skill `name`: looked up in the kits its
    /// prefix names (their skills are sorted), then anywhere.
    fn locate(&self, name: &str) -> Option<(usize, usize)> {
        let prefix = skillkit_parser::name::split(name).0;
        let in_kit = |(k, kit): (usize, &Kit)| kit.skill_index(name).map(|s| (k, s));
        let kits = || self.kits.iter().enumerate();
        kits()
            .filter(|(_, kit)| Some(kit.name.as_ref()) == prefix)
            .find_map(in_kit)
            .or_else(|| kits().find_map(in_kit))
    }

    /// Every sub-agent.
    ///
    /// ```
    /// assert_eq!(skillkit::Snapshot::default().agents().count(), 0);
    /// ```
    pub fn agents(&self) -> impl Iterator<Item = &Arc<AgentDefinition>> {
        self.kits.iter().flat_map(|kit| &kit.agents)
    }

    /// The sub-agent or root agent named `name`.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().agent("a").is_none());
    /// ```
    pub fn agent(&self, name: &str) -> Option<&Arc<AgentDefinition>> {
        self.agents().find(|a| a.name == name).or_else(|| {
            self.kits
                .iter()
                .filter_map(|k| k.agent.as_ref())
                .find(|a| a.name == name)
        })
    }

    /// The root agent of the first kit that has one.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().root_agent().is_none());
    /// ```
    pub fn root_agent(&self) -> Option<&Arc<AgentDefinition>> {
        self.kits.iter().find_map(|kit| kit.agent.as_ref())
    }

    /// The tool that executes skill `name`, as its provider binds it; `None`
    /// for a knowledge skill or an unknown name.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().tool("a:b").is_none());
    /// ```
    pub fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let (kit, skill) = self.locate(name)?;
        self.tool_of(kit, &self.kits[kit].skills[skill])
    }

    /// Every skill, kit by kit, with its kit and its tool (if executable).
    ///
    /// ```
    /// assert_eq!(skillkit::Snapshot::default().entries().count(), 0);
    /// ```
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        self.kits.iter().enumerate().flat_map(move |(k, kit)| {
            kit.skills.iter().map(move |skill| Entry {
                kit,
                skill,
                tool: self.tool_of(k, skill),
            })
        })
    }

    fn tool_of(&self, kit: usize, skill: &Skill) -> Option<Arc<dyn Tool>> {
        let provider = self.providers.get(*self.kit_providers.get(kit)?)?;
        Arc::clone(provider).tool(skill)
    }

    /// The diagnostics of this query: problems of skills' files (skipped
    /// files, shadowed duplicates). A provider that failed is in
    /// [`failures`](Snapshot::failures).
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().diagnostics().is_empty());
    /// ```
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The providers that could not answer this query, in provider order;
    /// their kits are missing from it.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{Catalog, Kit, KitProvider, ProviderError};
    /// struct Hanging;
    /// #[skillkit::async_trait]
    /// impl KitProvider for Hanging {
    ///     async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
    ///         std::future::pending().await
    ///     }
    /// }
    /// let after = std::time::Duration::from_millis(50);
    /// let catalog = Catalog::builder().provider(Hanging).timeout(after).build();
    /// let snapshot = catalog.snapshot().await;
    /// assert_eq!(snapshot.failures()[0].provider, "Hanging");
    /// assert!(matches!(*snapshot.failures()[0].error, ProviderError::TimedOut { after: a } if a == after));
    /// # });
    /// ```
    pub fn failures(&self) -> &[ProviderFailure] {
        &self.failures
    }
}
