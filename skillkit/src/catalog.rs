//! [`Catalog`]: every registered provider, asked on every query, aggregated.
//!
//! There is no stale answer: what a provider holds now is what the next query
//! returns. Each query asks all providers concurrently and isolates each one: an
//! error, a panic or a timeout drops that provider for this query, with a
//! warning, and the others are served. Of two skills with the same full name the
//! one from the earlier provider (registration order) wins, and a warning names
//! both.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::join_all;
use skillkit_parser::Diagnostic;

use crate::agent::AgentDefinition;
use crate::kit::Kit;
use crate::provider::KitProvider;
use crate::skill::Skill;
use crate::tool::Tool;

/// How long a provider may take to answer one query, by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Aggregates kits from providers; cheap to clone (clones share providers).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::{Catalog, Memory, Skill};
///
/// let memory = Memory::new();
/// let catalog = Catalog::builder().provider(memory.clone()).build();
/// memory.put(Skill::new("greet:hello", "Say hello.").with_body("Hello, $ARGUMENTS!"));
/// // Seen by the very next query.
/// let skill = catalog.get_skill("greet:hello").await.unwrap();
/// assert_eq!(skill.render("Ada", None), "Hello, Ada!");
/// # });
/// ```
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("providers", &self.provider_names())
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

struct Inner {
    providers: Vec<Arc<dyn KitProvider>>,
    timeout: Duration,
    last_diagnostics: Mutex<Arc<[Diagnostic]>>,
}

/// Builds a [`Catalog`]; providers are listed in priority order.
///
/// ```
/// let catalog = skillkit::Catalog::builder()
///     .provider(skillkit::Memory::new())
///     .timeout(std::time::Duration::from_secs(2))
///     .build();
/// assert_eq!(catalog.provider_names(), ["memory"]);
/// ```
#[derive(Default)]
pub struct CatalogBuilder {
    providers: Vec<Arc<dyn KitProvider>>,
    timeout: Option<Duration>,
}

impl CatalogBuilder {
    /// Adds a provider (after the ones already added: lower priority).
    ///
    /// ```
    /// let builder = skillkit::Catalog::builder().provider(skillkit::Memory::new());
    /// ```
    pub fn provider(self, provider: impl KitProvider + 'static) -> Self {
        self.shared(Arc::new(provider))
    }

    /// Adds a provider you keep a handle on (for example an embedded kit you also
    /// call as a tool).
    ///
    /// ```
    /// use std::sync::Arc;
    /// let memory: Arc<dyn skillkit::KitProvider> = Arc::new(skillkit::Memory::new());
    /// let catalog = skillkit::Catalog::builder().shared(memory.clone()).build();
    /// ```
    pub fn shared(mut self, provider: Arc<dyn KitProvider>) -> Self {
        self.providers.push(provider);
        self
    }

    /// How long each provider may take per query ([`DEFAULT_TIMEOUT`] unless set).
    ///
    /// ```
    /// let builder = skillkit::Catalog::builder().timeout(std::time::Duration::from_millis(500));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The catalog.
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder().build();
    /// assert!(catalog.provider_names().is_empty());
    /// ```
    pub fn build(self) -> Catalog {
        Catalog {
            inner: Arc::new(Inner {
                providers: self.providers,
                timeout: self.timeout.unwrap_or(DEFAULT_TIMEOUT),
                last_diagnostics: Mutex::new(Arc::from([])),
            }),
        }
    }
}

/// A skill's name and description, as listed to people and models.
///
/// ```
/// let summary = skillkit::SkillSummary { name: "files:read".into(), description: "Read.".into() };
/// assert_eq!(summary.name, "files:read");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// The full name (`kit:skill`).
    pub name: String,
    /// The description.
    pub description: String,
}

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
    kits: Vec<Kit>,
    /// For each kit, the index of its provider.
    kit_providers: Vec<usize>,
    providers: Vec<Arc<dyn KitProvider>>,
    diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("kits", &self.kits)
            .field("diagnostics", &self.diagnostics)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// A builder; add providers in priority order.
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder().build();
    /// ```
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// The providers' names, in priority order.
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Memory::new()).build();
    /// assert_eq!(catalog.provider_names(), ["memory"]);
    /// ```
    pub fn provider_names(&self) -> Vec<String> {
        self.inner
            .providers
            .iter()
            .map(|p| p.name().into_owned())
            .collect()
    }

    /// Asks every provider now and aggregates their kits.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let snapshot = skillkit::Catalog::builder().build().snapshot().await;
    /// assert!(snapshot.kits().is_empty());
    /// # });
    /// ```
    pub async fn snapshot(&self) -> Snapshot {
        let timeout = self.inner.timeout;
        let answers = join_all(self.inner.providers.iter().map(|provider| {
            let name = provider.name().into_owned();
            let provider = Arc::clone(provider);
            async move {
                (
                    name,
                    ask(timeout, async move { provider.list_kits().await }).await,
                )
            }
        }))
        .await;
        let (snapshot, own) = self.aggregate(answers);
        self.remember(&snapshot.diagnostics, &own);
        snapshot
    }

    /// The snapshot of the providers' answers, and the diagnostics the
    /// catalog itself found (failed providers, shadowed duplicates); the
    /// snapshot's diagnostics are the kits' own followed by those.
    fn aggregate(
        &self,
        answers: Vec<(String, Result<Vec<Kit>, String>)>,
    ) -> (Snapshot, Vec<Diagnostic>) {
        let mut snapshot = Snapshot {
            providers: self.inner.providers.clone(),
            ..Snapshot::default()
        };
        let mut own = Vec::new();
        let mut names = Vec::with_capacity(answers.len());
        for (provider_index, (provider, outcome)) in answers.into_iter().enumerate() {
            match outcome {
                Ok(kits) => {
                    for kit in kits {
                        snapshot.diagnostics.extend(kit.diagnostics.iter().cloned());
                        snapshot.kits.push(kit);
                        snapshot.kit_providers.push(provider_index);
                    }
                }
                Err(why) => own.push(Diagnostic::warning(
                    0,
                    0,
                    format!("provider `{provider}` was skipped for this query: {why}"),
                )),
            }
            names.push(provider);
        }
        // Of two skills with one full name, the first (earlier provider) wins.
        let mut shadowed = Vec::new();
        if !snapshot.names_are_unique() {
            let mut first: HashMap<&str, usize> = HashMap::new();
            for (k, kit) in snapshot.kits.iter().enumerate() {
                for (s, skill) in kit.skills.iter().enumerate() {
                    if let Some(&winner) = first.get(skill.name.as_ref()) {
                        shadowed.push((k, s, winner));
                    } else {
                        first.insert(skill.name.as_ref(), k);
                    }
                }
            }
        }
        let mut warnings = Vec::with_capacity(shadowed.len());
        // From the back, so the indexes still to remove stay valid.
        for &(k, s, winner) in shadowed.iter().rev() {
            let skill = snapshot.kits[k].skills.remove(s);
            let winner_kit = &snapshot.kits[winner];
            let winner_path = winner_kit
                .skill(&skill.name)
                .and_then(|w| w.location.clone());
            warnings.push(shadowed_warning(
                &skill,
                &names[snapshot.kit_providers[k]],
                &names[snapshot.kit_providers[winner]],
                winner_path.as_deref(),
            ));
        }
        own.extend(warnings.into_iter().rev());
        snapshot.diagnostics.extend(own.iter().cloned());
        (snapshot, own)
    }

    /// Keeps the diagnostics of this query, and logs those the catalog found
    /// itself that were not there at the previous query (so an unchanged
    /// problem is not repeated on every query). Providers log their own kits'
    /// problems when they find them.
    fn remember(&self, diagnostics: &[Diagnostic], own: &[Diagnostic]) {
        let Ok(mut last) = self.inner.last_diagnostics.lock() else {
            return;
        };
        for diagnostic in own.iter().filter(|d| !last.contains(d)) {
            let path = diagnostic.path.as_ref().map(|p| p.display().to_string());
            tracing::warn!(path = path.as_deref(), "{}", diagnostic.message);
        }
        *last = Arc::from(diagnostics);
    }

    /// The diagnostics of the last query: skipped files, shadowed duplicates,
    /// providers that failed.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Local::new("/no/such/dir")).build();
    /// catalog.list_kits().await;
    /// assert!(catalog.diagnostics()[0].message.contains("/no/such/dir"));
    /// # });
    /// ```
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.inner
            .last_diagnostics
            .lock()
            .map(|d| d.to_vec())
            .unwrap_or_default()
    }

    /// Every kit, in provider order.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert!(skillkit::Catalog::builder().build().list_kits().await.is_empty());
    /// # });
    /// ```
    pub async fn list_kits(&self) -> Vec<Kit> {
        self.snapshot().await.kits
    }

    /// The kit named `name` (the first provider's, if several serve one),
    /// asked of every provider through its own
    /// [`get_kit`](KitProvider::get_kit), so a provider that answers one kit
    /// more cheaply (or differently) than all of them is heard. Providers that
    /// fail are skipped with a warning, as in every query.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("files:read", "Read."));
    /// let catalog = skillkit::Catalog::builder().provider(memory).build();
    /// assert_eq!(catalog.get_kit("files").await.unwrap().skills.len(), 1);
    /// assert!(catalog.get_kit("notes").await.is_none());
    /// # });
    /// ```
    pub async fn get_kit(&self, name: &str) -> Option<Kit> {
        let timeout = self.inner.timeout;
        let answers = join_all(self.inner.providers.iter().map(|provider| {
            let provider = Arc::clone(provider);
            let kit = name.to_owned();
            ask(timeout, async move { provider.get_kit(&kit).await })
        }))
        .await;
        let mut found = None;
        for (provider, answer) in self.inner.providers.iter().zip(answers) {
            match answer {
                Ok(Some(kit)) if found.is_none() => found = Some(kit),
                Ok(_) => {}
                Err(why) => tracing::warn!(
                    provider = %provider.name(),
                    kit = name,
                    "provider `{}` was skipped for this query: {why}",
                    provider.name()
                ),
            }
        }
        found
    }

    /// Every skill's full name and description.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("a:x", "X."));
    /// let skills = skillkit::Catalog::builder().provider(memory).build().list_skills().await;
    /// assert_eq!(skills[0].name, "a:x");
    /// # });
    /// ```
    pub async fn list_skills(&self) -> Vec<SkillSummary> {
        self.snapshot().await.summaries()
    }

    /// The skill with full name `name`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert!(skillkit::Catalog::builder().build().get_skill("a:x").await.is_none());
    /// # });
    /// ```
    pub async fn get_skill(&self, name: &str) -> Option<Arc<Skill>> {
        self.snapshot().await.skill(name).cloned()
    }

    /// Every sub-agent of every kit.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert!(skillkit::Catalog::builder().build().list_agents().await.is_empty());
    /// # });
    /// ```
    pub async fn list_agents(&self) -> Vec<Arc<AgentDefinition>> {
        self.snapshot().await.agents().cloned().collect()
    }

    /// The agent named `name`: a sub-agent (`kit:agent`) or a kit's root agent.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert!(skillkit::Catalog::builder().build().get_agent("files:sum").await.is_none());
    /// # });
    /// ```
    pub async fn get_agent(&self, name: &str) -> Option<Arc<AgentDefinition>> {
        self.snapshot().await.agent(name).cloned()
    }

    /// The root agent of the first kit (in provider order) that has one.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert!(skillkit::Catalog::builder().build().root_agent().await.is_none());
    /// # });
    /// ```
    pub async fn root_agent(&self) -> Option<Arc<AgentDefinition>> {
        self.snapshot().await.root_agent().cloned()
    }
}

impl Snapshot {
    /// Whether no two skills can share a full name, checked without hashing
    /// every name: kit names are distinct, and each kit's skills are sorted
    /// strictly and carry its own prefix (as every provider of this crate
    /// serves them). When this does not hold, the catalog looks for
    /// duplicates name by name.
    fn names_are_unique(&self) -> bool {
        let mut kits: Vec<&str> = self.kits.iter().map(|k| k.name.as_ref()).collect();
        kits.sort_unstable();
        if kits.windows(2).any(|w| w[0] == w[1]) {
            return false;
        }
        self.kits.iter().all(|kit| {
            let prefixed = |name: &str| {
                name.strip_prefix(kit.name.as_ref())
                    .is_some_and(|rest| rest.starts_with(skillkit_parser::name::SEPARATOR))
            };
            kit.skills.iter().all(|s| prefixed(&s.name))
                && kit.skills.windows(2).all(|w| w[0].name < w[1].name)
        })
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

    /// The diagnostics of this query.
    ///
    /// ```
    /// assert!(skillkit::Snapshot::default().diagnostics().is_empty());
    /// ```
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// Runs one provider's answer on its own task, so that an error, a panic or
/// a timeout is that provider's failure alone; the message says which.
async fn ask<T: Send + 'static>(
    timeout: Duration,
    answer: impl Future<Output = Result<T, crate::provider::ProviderError>> + Send + 'static,
) -> Result<T, String> {
    let mut task = tokio::spawn(answer);
    match tokio::time::timeout(timeout, &mut task).await {
        Ok(Ok(Ok(value))) => Ok(value),
        Ok(Ok(Err(error))) => Err(format!("{error}")),
        Ok(Err(join)) if join.is_panic() => Err(format!(
            "it panicked: {}",
            crate::tool::panic_message(&*join.into_panic())
        )),
        Ok(Err(join)) => Err(format!("its task was cancelled: {join}")),
        Err(_) => {
            task.abort();
            Err(format!("it did not answer within {timeout:?}"))
        }
    }
}

fn shadowed_warning(
    skill: &Skill,
    provider: &str,
    winner: &str,
    winner_path: Option<&std::path::Path>,
) -> Diagnostic {
    let place = |provider: &str, path: Option<&std::path::Path>| match path {
        Some(path) => format!("provider `{provider}` ({})", path.display()),
        None => format!("provider `{provider}`"),
    };
    let d = Diagnostic::warning(
        0,
        0,
        format!(
            "duplicate skill `{}`: the one from {} is ignored, the one from {} wins (the earlier provider); rename one of them",
            skill.name,
            place(provider, skill.location.as_deref()),
            place(winner, winner_path),
        ),
    );
    match &skill.location {
        Some(path) => d.with_path(path),
        None => d,
    }
}
