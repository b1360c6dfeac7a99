//! A Claude Code plugin marketplace (`.claude-plugin/marketplace.json`)
//! as a source of skills: the entry of one plugin, and where its files are.
//! `{"plugins": [{"name": …, "source": "./plugins/x"}]}`, or a source
//! object `{"source": "github", "repo": "owner/repo", "ref": …, "sha": …}`.

use serde::Deserialize;
use serde_json::Value;

use super::LockError;
use crate::providers::github::Reference;

/// One plugin of a marketplace.
#[derive(Debug, Deserialize)]
pub(super) struct Entry {
    name: String,
    source: Value,
}

#[derive(Debug, Deserialize)]
struct Marketplace {
    #[serde(default)]
    plugins: Vec<Entry>,
}

/// The entry of `plugin` in a marketplace's text, or why not.
pub(super) fn entry(text: &str, plugin: &str) -> Result<Entry, String> {
    let marketplace: Marketplace = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let names: Vec<String> = marketplace
        .plugins
        .iter()
        .map(|p| p.name.escape_debug().to_string())
        .collect();
    marketplace
        .plugins
        .into_iter()
        .find(|p| p.name == plugin)
        .ok_or_else(|| {
            format!(
                "no plugin `{}` (it has: {})",
                plugin.escape_debug(),
                names.join(", ")
            )
        })
}

impl Entry {
    /// The GitHub source of the plugin's folder and the commit it is pinned
    /// to: a path in the marketplace's repository (`marketplace` at `sha`),
    /// or a `github` source (at its `sha` when it has one).
    pub(super) fn source(
        &self,
        marketplace: &Reference,
        sha: &str,
    ) -> Result<(String, Option<String>), LockError> {
        let refused = |why: String| {
            LockError::Source(format!("plugin `{}`: {why}", self.name.escape_debug()))
        };
        match &self.source {
            Value::String(path) => {
                let path = path.trim_start_matches("./").trim_end_matches('/');
                let plain = !path.is_empty()
                    && path
                        .split('/')
                        .all(|part| !part.is_empty() && part != "." && part != "..");
                if !plain {
                    return Err(refused(format!(
                        "its source `{}` is not a folder inside the marketplace",
                        path.escape_debug()
                    )));
                }
                let base = match marketplace.path() {
                    Some(at) => format!("{}/{at}/{path}", marketplace.repository()),
                    None => format!("{}/{path}", marketplace.repository()),
                };
                let source = match marketplace.git_ref() {
                    Some(r) => format!("{base}@{r}"),
                    None => base,
                };
                Ok((source, Some(sha.to_owned())))
            }
            Value::Object(object) if object.get("source") == Some(&Value::from("github")) => {
                let text = |key: &str| object.get(key).and_then(Value::as_str);
                let repo = text("repo")
                    .ok_or_else(|| refused("its github source names no `repo`".into()))?;
                let base = match text("path") {
                    Some(path) => format!("{repo}/{}", path.trim_matches('/')),
                    None => repo.to_owned(),
                };
                let source = match text("ref") {
                    Some(r) => format!("{base}@{r}"),
                    None => base,
                };
                Ok((source, text("sha").map(str::to_owned)))
            }
            other => Err(refused(format!(
                "its source {} is not a GitHub repository or a folder of the marketplace",
                serde_json::to_string(other)
                    .unwrap_or_default()
                    .escape_debug()
            ))),
        }
    }
}
