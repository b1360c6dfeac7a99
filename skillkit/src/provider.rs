//! [`KitProvider`]: anything that produces kits.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::kit::Kit;
use crate::skill::Skill;
use crate::tool::Tool;

/// Why a provider could not answer.
///
/// A [`Catalog`](crate::Catalog) serves the other providers and reports the
/// error, with the provider's name, as a
/// [`ProviderFailure`](crate::catalog::ProviderFailure); a timeout and a panic, which
/// the catalog itself detects, are [`TimedOut`](ProviderError::TimedOut) and
/// [`Panicked`](ProviderError::Panicked).
///
/// ```
/// use skillkit::ProviderError;
///
/// /// What a person can do about a provider the catalog skipped.
/// fn advice(error: &ProviderError) -> &'static str {
///     match error {
///         ProviderError::Io { .. } => "check the folder",
///         ProviderError::TimedOut { .. } => "give it more time",
///         ProviderError::Panicked { .. } => "report a bug to its authors",
///         _ => "read the message",
///     }
/// }
///
/// let err = ProviderError::other("database unreachable");
/// assert_eq!(err.to_string(), "database unreachable");
/// assert_eq!(advice(&err), "read the message");
/// let late = ProviderError::TimedOut { after: std::time::Duration::from_secs(10) };
/// assert_eq!(advice(&late), "give it more time");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// A kit directory could not be read.
    #[error("cannot read kit directory `{}`: {source}; check that it exists and is readable", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The provider did not answer a [`Catalog`](crate::Catalog) query in
    /// time; the catalog gave up on it for that query.
    #[error(
        "it did not answer within {after:?}; make it answer sooner or give it more time \
         (`CatalogBuilder::timeout`)"
    )]
    TimedOut {
        /// The catalog's limit ([`CatalogBuilder::timeout`](crate::catalog::CatalogBuilder::timeout)).
        after: Duration,
    },
    /// The provider panicked while answering a [`Catalog`](crate::Catalog)
    /// query; the catalog caught it. A bug in the provider: report it to
    /// its authors.
    #[error("it panicked: {message}; this is a bug in the provider")]
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// Any other failure, with its message: a user-written provider's error,
    /// or the database error of a [`Sql`](crate::Sql) provider (find which
    /// with [`downcast_ref`](ProviderError::downcast_ref)).
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl ProviderError {
    /// Wraps any error (or message) of a user-written provider.
    ///
    /// ```
    /// let io = std::io::Error::other("disk on fire");
    /// assert_eq!(skillkit::ProviderError::other(io).to_string(), "disk on fire");
    /// ```
    pub fn other(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ProviderError::Other(error.into())
    }

    /// The error of type `T` this one wraps ([`Other`](ProviderError::Other)),
    /// to match on a provider's own error type (a `Sql` provider's
    /// `SqlError`), as [`std::io::Error`]'s `get_ref` does.
    ///
    /// ```
    /// let io = std::io::Error::other("disk on fire");
    /// let error = skillkit::ProviderError::other(io);
    /// assert_eq!(error.downcast_ref::<std::io::Error>().unwrap().to_string(), "disk on fire");
    /// assert!(error.downcast_ref::<std::fmt::Error>().is_none());
    /// ```
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        match self {
            ProviderError::Other(inner) => inner.downcast_ref(),
            _ => None,
        }
    }
}

/// A source of kits: a directory, GitHub, memory, a database, the binary itself.
///
/// Implement [`list_kits`](KitProvider::list_kits); everything else has a
/// default. A [`Catalog`](crate::Catalog) asks every provider on every query, so
/// answer with what the source holds now.
///
/// Writing your own: a provider over your application's database, which
/// keeps skills as rows (SkillKit ships one such provider, `skillkit::Sql`,
/// with the `sql` feature). Every query reads the rows; an error is returned,
/// and the catalog logs it and serves its other providers.
///
/// ```
/// use skillkit::{Catalog, Kit, KitProvider, ProviderError, Skill};
///
/// /// A row of the application's own `skill_records` table.
/// struct SkillRecord {
///     slug: String,
///     description: String,
///     body: String,
/// }
///
/// /// The application's database handle (its queries, its connection pool).
/// # #[derive(Default)]
/// # struct Repo { records: std::sync::Mutex<Vec<(String, String, String)>>, down: std::sync::atomic::AtomicBool }
/// # impl Repo {
/// #     async fn all_skill_records(&self) -> Result<Vec<SkillRecord>, std::io::Error> {
/// #         if self.down.load(std::sync::atomic::Ordering::Relaxed) { return Err(std::io::Error::other("database unreachable")); }
/// #         Ok(self.records.lock().unwrap().iter().map(|(slug, description, body)| SkillRecord { slug: slug.clone(), description: description.clone(), body: body.clone() }).collect())
/// #     }
/// #     fn insert(&self, slug: &str, description: &str, body: &str) { self.records.lock().unwrap().push((slug.into(), description.into(), body.into())); }
/// # }
///
/// struct DatabaseProvider {
///     repo: std::sync::Arc<Repo>,
/// }
///
/// #[skillkit::async_trait]
/// impl KitProvider for DatabaseProvider {
///     fn name(&self) -> std::borrow::Cow<'_, str> {
///         "database".into()
///     }
///
///     async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
///         let records = self.repo.all_skill_records().await.map_err(ProviderError::other)?;
///         let kit = records
///             .into_iter()
///             .fold(Kit::new("db"), |kit, record| kit.with_skill(to_skill(record)));
///         Ok(vec![kit])
///     }
///     // `get_kit` is not written: the default searches `list_kits`.
/// }
///
/// fn to_skill(record: SkillRecord) -> Skill {
///     Skill::new(format!("db:{}", record.slug), record.description).with_body(record.body)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let repo = std::sync::Arc::new(Repo::default());
/// let catalog = Catalog::builder()
///     .provider(DatabaseProvider { repo: repo.clone() })
///     .build();
/// repo.insert("greet", "Say hello.", "Say hello to $ARGUMENTS.");
/// let greet = catalog.get_skill("db:greet").await.unwrap(); // the next query sees the row
/// assert_eq!(greet.render("Ada", None).unwrap(), "Say hello to Ada.");
/// # repo.down.store(true, std::sync::atomic::Ordering::Relaxed);
/// # assert!(catalog.get_skill("db:greet").await.is_none());
/// # assert_eq!(catalog.failures()[0].provider, "database");
/// # assert!(catalog.failures()[0].to_string().contains("database unreachable"));
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kit provider",
    label = "`{Self}` does not implement `KitProvider`",
    note = "implement `skillkit::KitProvider` for it (`list_kits` is the one method to write)",
    note = "a struct that derives `Kit` is a provider once it has the code that executes its skills:\n\n    impl skillkit::EmbeddedKit for {Self} {{\n        async fn execute(&self, execution: skillkit::ToolExecution) -> skillkit::ToolOutcome {{\n            // `execution.skill` is the skill called, `execution.input` its JSON input\n            skillkit::ToolOutcome::ok(execution.arguments())\n        }}\n    }}\n"
)]
#[async_trait::async_trait]
pub trait KitProvider: Send + Sync {
    /// A short name for logs and diagnostics (`local:/app/skills`, `memory`, …).
    fn name(&self) -> Cow<'_, str> {
        let full = std::any::type_name::<Self>();
        Cow::Borrowed(full.rsplit("::").next().unwrap_or(full))
    }

    /// Every kit the provider holds now: the one method a provider must
    /// implement.
    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError>;

    /// The kit named `name`, if the provider holds it. The default searches
    /// [`list_kits`](KitProvider::list_kits); override it when one kit is cheaper
    /// to fetch than all.
    async fn get_kit(&self, name: &str) -> Result<Option<Kit>, ProviderError> {
        Ok(self
            .list_kits()
            .await?
            .into_iter()
            .find(|kit| kit.name == name))
    }

    /// The seeds' legacy name of [`list_kits`](KitProvider::list_kits), kept
    /// so code that calls it keeps working: it answers from `list_kits`.
    /// Implement `list_kits`, never this (overriding it changes nothing a
    /// catalog sees).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{KitProvider, Memory, Skill};
    /// let memory = Memory::new();
    /// memory.put(Skill::new("greet:hello", "Say hello."));
    /// #[allow(deprecated)]
    /// let kits = memory.load_kits().await.unwrap();
    /// assert_eq!(kits[0].name, "greet");
    /// # });
    /// ```
    #[deprecated(
        note = "call `list_kits`; `load_kits` answers from it and is kept only for older callers"
    )]
    async fn load_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        self.list_kits().await
    }

    /// The code that executes `skill`, one of the skills this provider
    /// served, or `None` for a knowledge skill (the default: an agent reads
    /// its body through `activate_skill`). This is where a provider binds
    /// executable code to its skills (embedded kits, the GitHub built-ins,
    /// [`Memory::put_tool`](crate::Memory::put_tool)); skills themselves are
    /// plain data. Called for every skill of every agent turn: answer without
    /// I/O.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skillkit::{Kit, KitProvider, ProviderError, Skill, Tool, ToolExecution, ToolOutcome};
    ///
    /// struct Clock;
    ///
    /// #[skillkit::async_trait]
    /// impl KitProvider for Clock {
    ///     async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
    ///         Ok(vec![Kit::new("clock").with_skill(Skill::new("clock:now", "Tell the time."))])
    ///     }
    ///     fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
    ///         (skill.name == "clock:now").then(|| self as Arc<dyn Tool>)
    ///     }
    /// }
    ///
    /// #[skillkit::async_trait]
    /// impl Tool for Clock {
    ///     async fn execute(&self, _: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::ok("noon")
    ///     }
    /// }
    /// let clock = Arc::new(Clock);
    /// assert!(clock.tool(&Skill::new("clock:now", "d")).is_some());
    /// ```
    fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
        let _ = skill;
        None
    }
}
