//! Downloading a tarball and unpacking it as it arrives: the response body is
//! streamed through gzip and tar into the staging directory, never held whole
//! in memory (at most a few chunks wait between the two), and [`Progress`] is
//! reported on the way.

use std::io::{self, Read};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::cache::Staging;
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

/// How many received chunks may wait for the unpacker.
const CHUNKS_IN_FLIGHT: usize = 8;

/// Downloads the tarball of `reference` at `sha` and unpacks it into
/// `staging`, which is handed back on success and deleted on failure.
///
/// This task pulls the body from the network and passes each chunk through a
/// small bounded channel to a blocking thread that decodes and writes it. If
/// this future is dropped (the import was cancelled), the download stops at
/// once and the unpacker, seeing the channel closed, deletes the staging
/// directory.
pub(crate) async fn download(
    client: &Client,
    reference: &Reference,
    sha: &str,
    staging: Staging,
    limits: Limits,
    progress: Option<ProgressFn>,
) -> Result<(Staging, Extracted), GitHubError> {
    let mut response = client.tarball(reference, sha).await?;
    let total = response.content_length();
    if total.is_some_and(|t| t > limits.max_total_bytes) {
        return Err(too_large(reference, Limit::TotalBytes, &limits));
    }
    let (chunks, received) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let source = reference.to_string();
    let subpath: Vec<String> = reference
        .path_segments()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let unpack = tokio::task::spawn_blocking(move || {
        let tripwire = Tripwire::default();
        let observe = |received| {
            if let Some(progress) = &progress {
                progress(&Progress {
                    source: source.clone(),
                    received,
                    total,
                });
            }
        };
        let body = ChannelReader {
            chunks: received,
            current: Bytes::new(),
            tripwire: tripwire.clone(),
        };
        let compressed = Budget::new(body, limits.max_total_bytes, tripwire.clone(), observe);
        let subpath: Vec<&str> = subpath.iter().map(String::as_str).collect();
        extract(compressed, staging.path(), &subpath, &limits, &tripwire)
            .map(|done| (staging, done))
    });
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => Ok(chunk),
            Ok(None) => break,
            Err(e) => Err(describe(e)),
        };
        let failed = chunk.is_err();
        // A closed channel means the unpacker stopped: stop downloading.
        if chunks.send(chunk).await.is_err() || failed {
            break;
        }
    }
    drop(chunks);
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

/// The body as a blocking `Read`: the chunks the download task sends. The
/// end of the channel is the end of the body; a network error is recorded
/// in the tripwire.
struct ChannelReader {
    chunks: mpsc::Receiver<Result<Bytes, String>>,
    current: Bytes,
    tripwire: Tripwire,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(detail)) => {
                    self.tripwire.trip(Trip::Interrupted(detail.clone()));
                    return Err(io::Error::other(detail));
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
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
