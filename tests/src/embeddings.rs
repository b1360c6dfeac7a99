//! A stand-in for an OpenAI-compatible embeddings endpoint on 127.0.0.1
//! (`POST /v1/embeddings`): deterministic vectors (the counts of a few
//! topics' words in each text), answered in reverse order with their
//! `index`, and a record of every request, so tests count what was embedded.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

/// The words of each topic: a text's vector counts them.
const TOPICS: [&[&str]; 3] = [
    &["money", "invoice", "payment", "cash", "billing", "bill"],
    &["picture", "photo", "image", "drawing", "sketch"],
    &["weather", "rain", "forecast", "storm"],
];

#[derive(Default)]
struct Seen {
    /// The inputs of each request, in order.
    requests: Vec<Vec<String>>,
    /// The bearer tokens sent.
    tokens: Vec<Option<String>>,
    failing: bool,
}

/// The endpoint: a handle to read what it was asked and make it fail.
#[derive(Clone)]
pub struct Embeddings {
    seen: Arc<Mutex<Seen>>,
    url: String,
}

/// The vector of `text`: how often each topic's words occur in it.
pub fn vector(text: &str) -> Vec<f32> {
    let text = text.to_lowercase();
    TOPICS
        .iter()
        .map(|words| words.iter().map(|w| text.matches(w).count() as f32).sum())
        .collect()
}

impl Embeddings {
    /// Serves at `http://127.0.0.1:<port>/v1` (its [`url`](Embeddings::url)).
    pub async fn start() -> Embeddings {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let embeddings = Embeddings {
            seen: Arc::default(),
            url,
        };
        let app = axum::Router::new()
            .route("/v1/embeddings", axum::routing::post(answer))
            .with_state(Arc::clone(&embeddings.seen));
        tokio::spawn(async move { axum::serve(listener, app).await });
        embeddings
    }

    /// The API's root (`…/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The inputs of every request so far.
    pub fn requests(&self) -> Vec<Vec<String>> {
        self.seen.lock().unwrap().requests.clone()
    }

    /// The bearer token of every request so far.
    pub fn tokens(&self) -> Vec<Option<String>> {
        self.seen.lock().unwrap().tokens.clone()
    }

    /// From now on every request is answered 500.
    pub fn fail(&self) {
        self.seen.lock().unwrap().failing = true;
    }
}

async fn answer(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Result<([(axum::http::HeaderName, &'static str); 1], String), StatusCode> {
    let request: Value = serde_json::from_slice(&body).map_err(|_| StatusCode::BAD_REQUEST)?;
    let inputs: Vec<String> = request["input"]
        .as_array()
        .ok_or(StatusCode::BAD_REQUEST)?
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect();
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_start_matches("Bearer ").to_owned());
    let mut seen = seen.lock().unwrap();
    seen.requests.push(inputs.clone());
    seen.tokens.push(token);
    if seen.failing {
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": vector(text)}))
        .collect();
    let answer = json!({"object": "list", "data": data, "model": request["model"]});
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    ))
}
