//! Downloading a tarball and unpacking it as it arrives: the response body is
//! streamed through gzip and tar into the staging directory, never held whole
//! in memory, and [`Progress`] is reported on the way.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use futures::TryStreamExt;
use tokio_util::io::{StreamReader, SyncIoBridge};

use super::client::Client;
use super::error::{GitHubError, Limit, describe};
use super::extract::{Budget, ExtractError, Extracted, Limits, Trip, Tripwire, extract};
use super::reference::Reference;

/// How far a download is: bytes received so far and the total when the
/// server announced it (GitHub's archive server often does not).
///
/// ```
/// let p = skillkit::providers::github::Progress { source: "o/r".into(), received: 50, total: Some(200) };
/// assert_eq!(p.fraction(), Some(0.25));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The source being downloaded (`owner/repo[/path][@ref]`).
    pub source: String,
    /// Compressed bytes received so far.
    pub received: u64,
    /// The compressed size, when known.
    pub total: Option<u64>,
}

impl Progress {
    /// `received / total`, when the total is known and not zero.
    ///
    /// ```
    /// let p = skillkit::providers::github::Progress { source: "o/r".into(), received: 5, total: None };
    /// assert_eq!(p.fraction(), None);
    /// ```
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|&t| t > 0)
            .map(|t| self.received as f64 / t as f64)
    }
}

/// The progress callback: called from a blocking thread for each chunk.
pub(crate) type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Downloads the tarball of `reference` at `sha` and unpacks it into `dest`.
pub(crate) async fn download(
    client: &Client,
    reference: &Reference,
    sha: &str,
    dest: PathBuf,
    limits: Limits,
    progress: Option<ProgressFn>,
) -> Result<Extracted, GitHubError> {
    let response = client.tarball(reference, sha).await?;
    let total = response.content_length();
    if total.is_some_and(|t| t > limits.max_total_bytes) {
        return Err(too_large(reference, Limit::TotalBytes, &limits));
    }
    let tripwire = Tripwire::default();
    let network = tripwire.clone();
    let body = response.bytes_stream().map_err(move |e| {
        let detail = describe(e);
        network.trip(Trip::Interrupted(detail.clone()));
        io::Error::other(detail)
    });
    let reader = SyncIoBridge::new(StreamReader::new(body));
    let source = reference.to_string();
    let subpath: Vec<String> = reference
        .path_segments()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let unpack = tokio::task::spawn_blocking(move || {
        let observe = |received| {
            if let Some(progress) = &progress {
                progress(&Progress {
                    source: source.clone(),
                    received,
                    total,
                });
            }
        };
        let compressed = Budget::new(reader, limits.max_total_bytes, tripwire.clone(), observe);
        let subpath: Vec<&str> = subpath.iter().map(String::as_str).collect();
        extract(compressed, &dest, &subpath, &limits, &tripwire)
    });
    let result = unpack.await.map_err(|join| GitHubError::Corrupt {
        reference: reference.to_string(),
        detail: format!("unpacking stopped unexpectedly: {join}"),
    })?;
    result.map_err(|error| match error {
        ExtractError::TooLarge(limit) => too_large(reference, limit, &limits),
        ExtractError::Interrupted(detail) => GitHubError::Interrupted {
            reference: reference.to_string(),
            detail,
        },
        ExtractError::Corrupt(detail) => GitHubError::Corrupt {
            reference: reference.to_string(),
            detail,
        },
        ExtractError::PathNotFound => GitHubError::PathNotFound {
            repository: reference.repository(),
            path: reference.path().unwrap_or_default().to_owned(),
            sha: sha.to_owned(),
        },
        ExtractError::Io { path, error } => GitHubError::Cache { path, error },
    })
}

fn too_large(reference: &Reference, limit: Limit, limits: &Limits) -> GitHubError {
    let max = match limit {
        Limit::TotalBytes => limits.max_total_bytes,
        Limit::FileBytes(_) => limits.max_file_bytes,
        Limit::Files => limits.max_files,
    };
    GitHubError::TooLarge {
        reference: reference.to_string(),
        limit,
        max,
    }
}
