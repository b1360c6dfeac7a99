//! The library's errors in the command's words. The library's messages name
//! its own settings (`api_token`, `cache_dir`, `base_url`, registering an
//! adapter); a person at the command line has flags and environment
//! variables instead (`GITHUB_TOKEN`, `--cache-dir`, `ANTHROPIC_BASE_URL`),
//! so the errors that name a setting are said again here, each with the exit
//! code it goes with.

use skillkit::agent::AgentError;
use skillkit::llm::LlmError;
use skillkit::providers::github::GitHubError;

use crate::failure::Failure;

/// Where the GitHub API root is set.
const GITHUB_URL: &str = "GITHUB_API_URL (or --github-url)";

/// Where the cache folder is set.
const CACHE_DIR: &str = "--cache-dir (or SKILLKIT_CACHE_DIR)";

/// A GitHub error as a failure: a source that cannot be a source is a usage
/// error and a cache, URL or client that cannot be used an I/O error (2);
/// what GitHub or the network answered is a failed work (1).
pub fn github(error: GitHubError) -> Failure {
    let full = error.to_string();
    match error {
        GitHubError::InvalidSource { .. }
        | GitHubError::InvalidPattern { .. }
        | GitHubError::Client(_) => Failure::io(full),
        GitHubError::Cache { path, error } => Failure::io(format!(
            "cannot use the cache at `{}`: {error}; check that it is writable, or give another \
             folder with {CACHE_DIR}",
            path.display()
        )),
        GitHubError::NoCacheDir => Failure::io(format!(
            "this system has no user cache folder; give one with {CACHE_DIR}"
        )),
        GitHubError::InvalidBaseUrl { url, reason } => Failure::io(format!(
            "invalid GitHub API URL `{url}` in {GITHUB_URL}: {}; give the API root, such as \
             `https://api.github.com` or `https://github.example.com/api/v3`",
            reason.replace(
                "give the token with `api_token` instead",
                "set GITHUB_TOKEN instead"
            )
        )),
        GitHubError::NotImported { reference } => Failure::failed(format!(
            "`{reference}` is not imported; `skillkit list --github` shows what is"
        )),
        GitHubError::Unauthorized { has_token: true } => Failure::failed(
            "GitHub rejected the token in GITHUB_TOKEN (HTTP 401): it is invalid, expired or \
             revoked; set a valid one",
        ),
        GitHubError::Unauthorized { has_token: false } => Failure::failed(
            "GitHub requires authentication (HTTP 401); set GITHUB_TOKEN to a token that can \
             read the repository",
        ),
        GitHubError::Forbidden {
            reference,
            has_token,
        } => Failure::failed(format!(
            "GitHub refused access to `{reference}` (HTTP 403); {}",
            match has_token {
                true => "the token in GITHUB_TOKEN cannot read this repository; set one that can",
                false => "set GITHUB_TOKEN to a token that can read this repository",
            }
        )),
        GitHubError::RateLimited { has_token, .. } => Failure::failed(format!(
            "{}; {}",
            what_happened(&full, "; "),
            match has_token {
                true => "wait until then and try again",
                false => "set GITHUB_TOKEN for a much higher limit, or wait until then",
            }
        )),
        GitHubError::UnexpectedStatus { status, during } => Failure::failed(format!(
            "GitHub answered HTTP {status} while {during}; check that {GITHUB_URL} points at the \
             GitHub API, then try again"
        )),
        GitHubError::BadResponse { during, detail } => Failure::failed(format!(
            "GitHub's answer could not be understood while {during} ({detail}); check that \
             {GITHUB_URL} points at the GitHub API"
        )),
        GitHubError::NoSkills { failed, .. } if failed > 0 => Failure::failed(
            full.replace("the log names", "`RUST_LOG=warn skillkit import …` names"),
        ),
        GitHubError::TooLarge { .. } => Failure::failed(format!(
            "{}; import a smaller folder of it (`owner/repo/path`)",
            what_happened(&full, ". If you trust")
        )),
        _ => Failure::failed(full),
    }
}

/// The part of a library message before `advice` (where it says what to do
/// with a setting of its own), or all of it.
fn what_happened<'a>(message: &'a str, advice: &str) -> &'a str {
    message.split_once(advice).map_or(message, |(said, _)| said)
}

/// An agent's error, naming the command's knobs.
pub fn agent(error: &AgentError) -> String {
    match error {
        AgentError::Model {
            agent,
            model,
            source,
        } => format!(
            "agent `{agent}` cannot use model `{model}`: {}",
            llm(source)
        ),
        AgentError::Llm(source) => format!("the model failed: {}", llm(source)),
        AgentError::MaxTurns { limit } => format!(
            "the agent stopped after {limit} turns without a final answer; ask for a smaller task"
        ),
        error => error.to_string(),
    }
}

/// A model error, naming the command's knobs.
pub fn llm(error: &LlmError) -> String {
    match error {
        LlmError::UnknownScheme { scheme, known } => format!(
            "unknown model scheme `{scheme}`; known schemes: {known}; fix the URI given to \
             --model (or SKILLKIT_MODEL, or the AGENT.md's `model`)"
        ),
        LlmError::MissingApiKey { provider, variable } => {
            format!("no API key for `{provider}`; set {variable}, or pass --model URI")
        }
        LlmError::Transport { provider, message } => format!(
            "request to `{provider}` failed: {message}; check {} and that the server is reachable",
            base_url(provider)
        ),
        LlmError::Status {
            provider,
            status: 404,
            message,
        } => format!(
            "`{provider}` answered HTTP 404: {message}; check {} and the model name",
            base_url(provider)
        ),
        LlmError::Timeout {
            provider,
            during,
            after,
        } => format!(
            "`{provider}` sent nothing for {} s while {during}; try again",
            after.as_secs()
        ),
        LlmError::IncompleteToolInput {
            id,
            name,
            stop_reason,
        } => format!(
            "the answer stopped ({stop_reason}) inside the input of tool call `{name}` ({id}); \
             raise `max_tokens` in the model URI (`--model anthropic://MODEL?max_tokens=8192`) \
             and retry"
        ),
        error => error.to_string(),
    }
}

/// The variable that moves `provider`'s adapter to another server.
fn base_url(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "ANTHROPIC_BASE_URL",
        "openai" => "OPENAI_BASE_URL",
        _ => "the server's address",
    }
}
