//! [`Catalog`]: every registered provider, asked on every query, aggregated.
//!
//! There is no stale answer: what a provider holds now is what the next query
//! returns. Each query asks all providers concurrently and isolates each one: an
//! error, a panic or a timeout drops that provider for this query, as a
//! [`ProviderFailure`], and the others are served. Of two skills with the same full name the
//! one from the earlier provider (registration order) wins, and a warning names
//! both.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures::future::join_all;
use skillkit_parser::Diagnostic;

mod builder;
mod failure;
mod snapshot;

pub use builder::CatalogBuilder;
pub use failure::ProviderFailure;
pub use snapshot::{Entry, Snapshot};

use crate::agent_definition::AgentDefinition;
use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::skill::Skill;

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
/// assert_eq!(skill.render("Ada", None).unwrap(), "Hello, Ada!");
/// # });
/// ```
#[derive(Clone)]
pub struct Catalog {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("providers", &self.provider_names())
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

pub(crate) struct Inner {
    providers: Vec<Arc<dyn KitProvider>>,
    timeout: Duration,
    last: Mutex<Last>,
    /// The search index (`crate::search`), shared by the clones.
    pub(crate) search: crate::search::Search,
}

/// What the last query found, kept for [`Catalog::diagnostics`] and
/// [`Catalog::failures`].
#[derive(Default)]
struct Last {
    diagnostics: Arc<[Diagnostic]>,
    failures: Arc<[ProviderFailure]>,
}

/// A skill's name and description, as listed to people and models.
///
/// ```
/// let summary = skillkit::catalog::SkillSummary { name: "files:read".into(), description: "Read.".into() };
/// assert_eq!(summary.name, "files:read");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// The full name (`kit:skill`).
    pub name: String,
    /// The description.
    pub description: String,
}

impl Catalog {
    /// The skills best matching `query`, best first, at most `limit`
    /// (ranking: see the [module](crate::search)). Asks the providers now, as
    /// every query does, and brings the index up to date first. Skills the
    /// model may not see (`disable-model-invocation`) are returned too:
    /// callers filter.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("docs:pdf-reader", "Read PDF documents."));
    /// memory.put(skillkit::Skill::new("docs:slides", "Build slide decks."));
    /// let catalog = skillkit::Catalog::builder().provider(memory).build();
    /// // A plural and a typo.
    /// let hits = catalog.search("read pdfs documnets", 10).await;
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!(hits[0].skill.name, "docs:pdf-reader");
    /// # });
    /// ```
    pub async fn search(&self, query: &str, limit: usize) -> Vec<crate::search::SearchHit> {
        let snapshot = self.snapshot().await;
        self.search_snapshot(&snapshot, query, limit).await
    }

    /// [`search`](Catalog::search) over a snapshot the caller already holds
    /// (no provider is asked).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("git:commit", "Write a commit message."));
    /// let catalog = skillkit::Catalog::builder().provider(memory).build();
    /// let snapshot = catalog.snapshot().await;
    /// let hits = catalog.search_snapshot(&snapshot, "commit", 3).await;
    /// assert_eq!(hits[0].skill.name, "git:commit");
    /// # });
    /// ```
    pub async fn search_snapshot(
        &self,
        snapshot: &Snapshot,
        query: &str,
        limit: usize,
    ) -> Vec<crate::search::SearchHit> {
        let kits = snapshot.kits_with_providers();
        self.inner.search.search(kits, query, limit).await
    }

    /// [`search_snapshot`](Catalog::search_snapshot) by the words alone,
    /// never waiting for an embedder (the agent's prompt, built while a
    /// request is assembled).
    #[cfg(feature = "agent")]
    pub(crate) fn search_words(
        &self,
        snapshot: &Snapshot,
        query: &str,
        limit: usize,
    ) -> Vec<crate::search::SearchHit> {
        let kits = snapshot.kits_with_providers();
        self.inner.search.lexical(kits, query, limit)
    }

    /// The search index's counters: how many skills it holds, how many skill
    /// versions it has indexed so far, bodies still being read.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("a:x", "X."));
    /// let catalog = skillkit::Catalog::builder().provider(memory.clone()).build();
    /// catalog.search("x", 1).await;
    /// catalog.search("x", 1).await; // unchanged: nothing indexed again
    /// assert_eq!(catalog.search_stats().reindexed, 1);
    /// memory.put(skillkit::Skill::new("a:y", "Y."));
    /// catalog.search("y", 1).await; // only the new skill
    /// assert_eq!(catalog.search_stats().reindexed, 2);
    /// assert_eq!(catalog.search_stats().skills, 2);
    /// # });
    /// ```
    pub fn search_stats(&self) -> crate::search::SearchStats {
        self.inner.search.stats()
    }

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
        self.remember(&snapshot, &own);
        snapshot
    }

    /// The snapshot of the providers' answers, and the diagnostics the
    /// catalog itself found (shadowed duplicates); the snapshot's
    /// diagnostics are the kits' own followed by those, its failures the
    /// providers that could not answer.
    fn aggregate(
        &self,
        answers: Vec<(String, Result<Vec<Kit>, ProviderError>)>,
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
                Err(error) => snapshot
                    .failures
                    .push(ProviderFailure::new(provider.clone(), error)),
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
            let skill = snapshot.kits[k].skills.make_mut().remove(s);
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

    /// Keeps the diagnostics and failures of this query, and logs the
    /// failures and the diagnostics the catalog found itself that were not
    /// there at the previous query (so an unchanged problem is not repeated
    /// on every query). Providers log their own kits' problems when they
    /// find them.
    fn remember(&self, snapshot: &Snapshot, own: &[Diagnostic]) {
        let Ok(mut last) = self.inner.last.lock() else {
            return;
        };
        for failure in &snapshot.failures {
            if !last.failures.iter().any(|f| f.same_as(failure)) {
                tracing::warn!(provider = %failure.provider, "{failure}");
            }
        }
        for diagnostic in own.iter().filter(|d| !last.diagnostics.contains(d)) {
            let path = diagnostic.path.as_ref().map(|p| p.display().to_string());
            tracing::warn!(path = path.as_deref(), "{}", diagnostic.message);
        }
        *last = Last {
            diagnostics: Arc::from(snapshot.diagnostics.as_slice()),
            failures: Arc::from(snapshot.failures.as_slice()),
        };
    }

    /// The diagnostics of the last query: problems of skills' files
    /// (skipped files, shadowed duplicates). A provider that failed is a
    /// [`failure`](Catalog::failures), not a diagnostic.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let kit = dir.path().join("files");
    /// # std::fs::create_dir_all(kit.join("skills/broken")).unwrap();
    /// // A SKILL.md without a description.
    /// std::fs::write(kit.join("skills/broken/SKILL.md"), "---\nname: broken\n---\n").unwrap();
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Local::new(&kit)).build();
    /// catalog.list_kits().await;
    /// let diagnostics = catalog.diagnostics();
    /// assert!(diagnostics[0].path.as_ref().unwrap().ends_with("skills/broken/SKILL.md"));
    /// assert!(diagnostics[0].message.contains("description"));
    /// # });
    /// ```
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.inner
            .last
            .lock()
            .map(|last| last.diagnostics.to_vec())
            .unwrap_or_default()
    }

    /// The providers that could not answer the last query (an error, a
    /// panic, a timeout), in provider order; empty when all answered.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = skillkit::Catalog::builder().provider(skillkit::Local::new("/no/such/dir")).build();
    /// catalog.list_kits().await;
    /// let failures = catalog.failures();
    /// assert_eq!(failures[0].provider, "local:/no/such/dir");
    /// assert!(failures[0].error.to_string().contains("/no/such/dir"));
    /// # });
    /// ```
    pub fn failures(&self) -> Vec<ProviderFailure> {
        self.inner
            .last
            .lock()
            .map(|last| last.failures.to_vec())
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
    /// fail are skipped with a logged warning (this lookup does not change
    /// [`failures`](Catalog::failures), which are those of the last
    /// snapshot).
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
                Err(error) => {
                    let failure = ProviderFailure::new(provider.name().into_owned(), error);
                    tracing::warn!(provider = %failure.provider, kit = name, "{failure}");
                }
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

/// Runs one provider's answer on the caller's task, each poll guarded, so
/// that an error, a panic or a timeout is that provider's failure alone; the
/// error says which.
async fn ask<T: Send + 'static>(
    timeout: Duration,
    answer: impl Future<Output = Result<T, ProviderError>> + Send + 'static,
) -> Result<T, ProviderError> {
    // Not a task of its own: that would cost a trip through the scheduler
    // (on a multi-thread runtime, often the wake-up of another worker) for
    // every answer, and the wake-up of this task when it is done.
    let mut answer = Box::pin(answer);
    let mut guarded = std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| answer.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(ProviderError::Panicked {
                message: crate::tool::panic_message(&*panic),
            })),
        }
    });
    // Most answers are ready when first asked (a provider that knows
    // nothing changed): taken without setting a timer.
    if let Poll::Ready(answer) = futures::poll!(&mut guarded) {
        return answer;
    }
    tokio::time::timeout(timeout, guarded)
        .await
        .unwrap_or(Err(ProviderError::TimedOut { after: timeout }))
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
