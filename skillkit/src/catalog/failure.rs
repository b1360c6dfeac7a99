//! [`ProviderFailure`]: a provider the catalog skipped for one query.

use std::sync::Arc;

use crate::provider::ProviderError;

/// A provider that could not answer one [`Catalog`](crate::Catalog) query:
/// its name and why. The catalog served the other providers; the next query
/// asks this one again.
///
/// Failures are not [`Diagnostic`](crate::Diagnostic)s (those are problems
/// of a skill's file): read them from
/// [`Snapshot::failures`](crate::Snapshot::failures) or
/// [`Catalog::failures`](crate::Catalog::failures), and match
/// [`error`](ProviderFailure::error) to tell a missing folder from a
/// timeout, a panic or a database fault.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::{Catalog, Local, ProviderError};
///
/// let catalog = Catalog::builder().provider(Local::new("/no/such/dir")).build();
/// let snapshot = catalog.snapshot().await;
/// let failure = &snapshot.failures()[0];
/// assert_eq!(failure.provider, "local:/no/such/dir");
/// assert!(matches!(*failure.error, ProviderError::Io { .. }));
/// assert!(failure.to_string().starts_with("provider `local:/no/such/dir` was skipped for this query: "));
/// assert!(snapshot.diagnostics().is_empty());
/// # });
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProviderFailure {
    /// The provider's [`name`](crate::KitProvider::name), as in logs
    /// (`local:/app/skills`, `github`, `sqlite://skills.db`, …).
    pub provider: String,
    /// Why it could not answer: its own error, or
    /// [`TimedOut`](ProviderError::TimedOut) and
    /// [`Panicked`](ProviderError::Panicked), which the catalog detects.
    /// Shared, so a failure is cheap to clone with its snapshot.
    pub error: Arc<ProviderError>,
}

impl ProviderFailure {
    pub(super) fn new(provider: String, error: ProviderError) -> Self {
        ProviderFailure {
            provider,
            error: Arc::new(error),
        }
    }

    /// Whether `other` is the same failure as this one (same provider, same
    /// message), so an unchanged failure is logged once, not on every query.
    pub(super) fn same_as(&self, other: &ProviderFailure) -> bool {
        self.provider == other.provider && self.error.to_string() == other.error.to_string()
    }
}

impl std::fmt::Display for ProviderFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "provider `{}` was skipped for this query: {}",
            self.provider, self.error
        )
    }
}

/// The message already holds the error's, so it is not repeated as a source.
impl std::error::Error for ProviderFailure {}
