//! [`CatalogBuilder`]: the providers of a catalog, in priority order, and
//! its settings (a provider's time limit, the search index's embedder and
//! how much of each body it reads).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Catalog, DEFAULT_TIMEOUT, Inner};
use crate::provider::KitProvider;

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
    pub(crate) embedder: Option<Arc<dyn crate::search::Embedder>>,
    search_body_bytes: Option<usize>,
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

    /// Adds providers in order (after the ones already added), for example
    /// the standard locations of [`Local::discover`](crate::Local::discover).
    ///
    /// ```
    /// let catalog = skillkit::Catalog::builder()
    ///     .providers([skillkit::Local::new("/a"), skillkit::Local::new("/b")])
    ///     .build();
    /// assert_eq!(catalog.provider_names().len(), 2);
    /// ```
    pub fn providers<P: KitProvider + 'static>(
        self,
        providers: impl IntoIterator<Item = P>,
    ) -> Self {
        providers.into_iter().fold(self, Self::provider)
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

    /// Adds semantic ranking to [`Catalog::search`] (and
    /// [`search_snapshot`](Catalog::search_snapshot)): an embeddings
    /// endpoint (`search::HttpEmbedder`, feature `embed`) or the
    /// application's own model (see [`Embedder`](crate::search::Embedder) and the
    /// [module](crate::search) for how the rankings are fused).
    ///
    /// ```
    /// struct Flat;
    /// #[skillkit::async_trait]
    /// impl skillkit::search::Embedder for Flat {
    ///     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, skillkit::search::EmbedError> {
    ///         Ok(texts.iter().map(|_| vec![1.0]).collect())
    ///     }
    /// }
    /// let catalog = skillkit::Catalog::builder().embedder(Flat).build();
    /// ```
    pub fn embedder(mut self, embedder: impl crate::search::Embedder + 'static) -> Self {
        self.embedder = Some(Arc::new(embedder));
        self
    }

    /// How much of each skill's body [`Catalog::search`] indexes: its first
    /// `bytes` bytes, whole words only ([`search::BODY_BYTES`](crate::search::BODY_BYTES),
    /// the whole body up to 1 MiB, unless set; `usize::MAX` has no cut, 0
    /// indexes no body). Names and descriptions are always indexed whole.
    ///
    /// ```
    /// // Only each body's overview (its first KiB).
    /// let catalog = skillkit::Catalog::builder().search_body_bytes(1024).build();
    /// ```
    pub fn search_body_bytes(mut self, bytes: usize) -> Self {
        self.search_body_bytes = Some(bytes);
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
                last: Mutex::default(),
                search: crate::search::Search::new(
                    self.embedder,
                    self.search_body_bytes.unwrap_or(crate::search::BODY_BYTES),
                ),
            }),
        }
    }
}
