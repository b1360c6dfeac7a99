//! [`HttpEmbedder`]: an [`Embedder`] over any OpenAI-compatible
//! `/v1/embeddings` endpoint, batching its requests and keeping every vector
//! on disk by the digest of its text, so a restart embeds nothing unchanged.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder};

/// Texts sent in one request, unless [`HttpEmbedder::batch`] says.
const DEFAULT_BATCH: usize = 64;

/// The model asked for, unless [`HttpEmbedder::model`] says.
const DEFAULT_MODEL: &str = "text-embedding-3-small";

/// The most bytes of an answer read (a batch of 64 vectors of 4,096
/// numbers written as JSON is about 5 MB).
const MAX_ANSWER: usize = 64 << 20;

/// The most numbers a vector may have.
const MAX_DIMENSIONS: usize = 16_384;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// An embedding model behind an OpenAI-compatible HTTP endpoint (OpenAI,
/// Ollama, vLLM, llama.cpp's server, …): `POST {url}` with `{"model",
/// "input": [texts]}`, answered `{"data": [{"index", "embedding"}]}`.
///
/// * **Batching**: texts go 64 to a request (see
///   [`batch`](HttpEmbedder::batch)).
/// * **Cache**: every vector is kept on disk, by the SHA-256 of the model's
///   name and the text, under [`cache_dir`](HttpEmbedder::cache_dir)
///   (default: the user's cache folder, `skillkit/embeddings`). A skill's
///   text changes with its version, so a restart asks the endpoint only for
///   skills new or changed since. A vector is written to a temporary file and
///   renamed into place: a crash leaves no half-written entry.
/// * **Keys**: the bearer token is read from the environment variable
///   [`api_key_env`](HttpEmbedder::api_key_env) names, at each request, and
///   only sent to this endpoint (no other variable is ever read for it).
/// * **Untrusted answers**: an answer over 64 MiB, a vector count that does
///   not match, vectors of unequal or absurd dimensions, or a number that is
///   not finite is an error (the search then ranks lexically).
///
/// ```
/// use skillkit::search::HttpEmbedder;
///
/// let ollama = HttpEmbedder::new("http://127.0.0.1:11434/v1")
///     .model("nomic-embed-text")
///     .cache_dir("/tmp/skillkit-embeddings");
/// assert_eq!(ollama.url(), "http://127.0.0.1:11434/v1/embeddings");
/// let catalog = skillkit::Catalog::builder().embedder(ollama).build();
/// ```
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    url: String,
    model: String,
    api_key_env: Option<String>,
    cache: Option<PathBuf>,
    batch: usize,
    client: reqwest::Client,
}

impl HttpEmbedder {
    /// The endpoint at `url`: the embeddings URL itself (`…/embeddings`), or
    /// the API's root (`http://127.0.0.1:11434/v1`), to which `/embeddings`
    /// is added.
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("https://api.openai.com/v1/embeddings");
    /// assert_eq!(e.url(), "https://api.openai.com/v1/embeddings");
    /// ```
    pub fn new(url: impl Into<String>) -> HttpEmbedder {
        let url = url.into();
        let url = match url.trim_end_matches('/') {
            root if root.ends_with("/embeddings") => root.to_owned(),
            root => format!("{root}/embeddings"),
        };
        HttpEmbedder {
            url,
            model: DEFAULT_MODEL.to_owned(),
            api_key_env: None,
            cache: dirs::cache_dir().map(|dir| dir.join("skillkit").join("embeddings")),
            batch: DEFAULT_BATCH,
            client: reqwest::Client::builder()
                .timeout(TIMEOUT)
                .build()
                .unwrap_or_default(),
        }
    }

    /// The model to ask for (`text-embedding-3-small` unless set).
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("http://127.0.0.1:8080/v1").model("bge-small");
    /// assert_eq!(e.model_name(), "bge-small");
    /// ```
    pub fn model(mut self, model: impl Into<String>) -> HttpEmbedder {
        self.model = model.into();
        self
    }

    /// Sends the value of environment variable `var` as a bearer token.
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("https://api.openai.com/v1").api_key_env("OPENAI_API_KEY");
    /// # let _ = e;
    /// ```
    pub fn api_key_env(mut self, var: impl Into<String>) -> HttpEmbedder {
        self.api_key_env = Some(var.into());
        self
    }

    /// Keeps vectors in `dir` (made when first written).
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("http://127.0.0.1:1/v1").cache_dir("/tmp/vectors");
    /// # let _ = e;
    /// ```
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> HttpEmbedder {
        self.cache = Some(dir.into());
        self
    }

    /// Keeps no vector on disk.
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("http://127.0.0.1:1/v1").no_cache();
    /// # let _ = e;
    /// ```
    pub fn no_cache(mut self) -> HttpEmbedder {
        self.cache = None;
        self
    }

    /// Sends at most `texts` texts a request (at least 1; 64 unless set).
    ///
    /// ```
    /// let e = skillkit::search::HttpEmbedder::new("http://127.0.0.1:1/v1").batch(16);
    /// # let _ = e;
    /// ```
    pub fn batch(mut self, texts: usize) -> HttpEmbedder {
        self.batch = texts.max(1);
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The model asked for.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// Where the vector of `text` is kept, if anywhere.
    fn cached(&self, text: &str) -> Option<PathBuf> {
        let dir = self.cache.as_ref()?;
        let mut digest = Sha256::new();
        digest.update(self.model.as_bytes());
        digest.update([0]);
        digest.update(text.as_bytes());
        let hex: String = digest
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Some(dir.join(&hex[..2]).join(format!("{}.f32", &hex[2..])))
    }

    /// Asks the endpoint for the vectors of `texts` (one request).
    async fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut request = self.client.post(&self.url).json(&serde_json::json!({
            "model": self.model,
            "input": texts,
        }));
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var).map_err(|_| {
                format!("the embedding endpoint's key is read from ${var}, which is not set")
            })?;
            request = request.bearer_auth(key);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| format!("the embedding endpoint {} cannot be reached: {e}", self.url))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > MAX_ANSWER {
                return Err(
                    format!("the embedding endpoint answered over {MAX_ANSWER} bytes").into(),
                );
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)])
                .escape_debug()
                .to_string();
            return Err(format!(
                "the embedding endpoint {} answered {status}: {text}",
                self.url
            )
            .into());
        }
        vectors(&body, texts.len())
    }
}

/// The vectors of an answer to `count` texts, in the texts' order, checked.
fn vectors(body: &[u8], count: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        #[serde(default)]
        index: Option<usize>,
        embedding: Vec<f32>,
    }
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|e| format!("the embedding endpoint's answer is not an embeddings list: {e}"))?;
    if answer.data.len() != count {
        return Err(format!(
            "the embedding endpoint answered {} vectors for {count} texts",
            answer.data.len()
        )
        .into());
    }
    let mut ordered: Vec<Option<Vec<f32>>> = vec![None; count];
    for (at, item) in answer.data.into_iter().enumerate() {
        let at = item.index.unwrap_or(at);
        let slot = ordered.get_mut(at).ok_or_else(|| {
            format!("the embedding endpoint answered index {at} for {count} texts")
        })?;
        *slot = Some(item.embedding);
    }
    let vectors: Vec<Vec<f32>> = ordered
        .into_iter()
        .collect::<Option<_>>()
        .ok_or("the embedding endpoint answered one index twice")?;
    let dimensions = vectors.first().map_or(0, Vec::len);
    if dimensions == 0 || dimensions > MAX_DIMENSIONS {
        return Err(
            format!("the embedding endpoint answered vectors of {dimensions} numbers").into(),
        );
    }
    if vectors
        .iter()
        .any(|v| v.len() != dimensions || v.iter().any(|x| !x.is_finite()))
    {
        return Err("the embedding endpoint answered vectors of unequal length or numbers that are not finite".into());
    }
    Ok(vectors)
}

/// Reads a kept vector; `None` when there is none (or it is not one).
fn read_vector(path: &Path) -> Option<Vec<f32>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.is_empty() || bytes.len() % 4 != 0 || bytes.len() / 4 > MAX_DIMENSIONS {
        return None;
    }
    let vector: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    vector.iter().all(|x| x.is_finite()).then_some(vector)
}

/// Keeps `vector` at `path`: written beside it, then renamed into place.
fn write_vector(path: &Path, vector: &[f32]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, &bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[async_trait::async_trait]
impl Embedder for HttpEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = texts
            .iter()
            .map(|text| self.cached(text).and_then(|path| read_vector(&path)))
            .collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        for batch in missing.chunks(self.batch) {
            let asked: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            let vectors = self.request(&asked).await?;
            for (&i, vector) in batch.iter().zip(vectors) {
                if let Some(path) = self.cached(&texts[i])
                    && let Err(error) = write_vector(&path, &vector)
                {
                    tracing::debug!(path = %path.display(), "an embedding is not kept: {error}");
                }
                out[i] = Some(vector);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_ordered_by_index_and_checked() {
        let body =
            br#"{"data":[{"index":1,"embedding":[0.0,1.0]},{"index":0,"embedding":[1.0,0.0]}]}"#;
        assert_eq!(vectors(body, 2).unwrap(), [vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert!(vectors(body, 3).is_err(), "a count that does not match");
        let unequal = br#"{"data":[{"embedding":[1.0]},{"embedding":[1.0,2.0]}]}"#;
        assert!(vectors(unequal, 2).is_err());
        let twice = br#"{"data":[{"index":0,"embedding":[1.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert!(vectors(twice, 2).is_err());
        assert!(vectors(b"<html>", 1).is_err());
    }

    #[test]
    fn a_vector_is_kept_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ab").join("cd.f32");
        write_vector(&path, &[1.5, -2.0]).unwrap();
        assert_eq!(read_vector(&path), Some(vec![1.5, -2.0]));
        std::fs::write(&path, [0u8; 5]).unwrap();
        assert_eq!(read_vector(&path), None, "not a whole number of floats");
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left");
    }

    #[test]
    fn the_url_is_the_embeddings_endpoint() {
        assert_eq!(
            HttpEmbedder::new("http://h/v1/").url(),
            "http://h/v1/embeddings"
        );
        assert_eq!(
            HttpEmbedder::new("http://h/x/embeddings").url(),
            "http://h/x/embeddings"
        );
    }
}
