//! What `run` and `chat` share: the agent of AGENT_DIR over its skills, the
//! `--skills` kits and the imported kits; the model (offline when no API key
//! is set); `terminal:ask`; the approval policy; and asking a person y/n.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use skillkit::AgentDefinition;
use skillkit::agent::{ACTIVATE_SKILL, Agent, AgentOptions, History, start_agent};
use skillkit::approval::{Approval, ApprovalPolicy, Decision};
use skillkit::llm::{LlmError, Message, ModelUri, Registry, Reply, Scripted};
use skillkit::parser::Severity;
use skillkit::script::{Sandbox, ScriptOptions};
use skillkit::{Catalog, Local};

use crate::args::{AgentArgs, Global};
use crate::ask;
use crate::failure::Failure;
use crate::list::one_line;
use crate::output::err;
use crate::sources;

/// A started agent, with what the commands tell about it.
pub struct Started {
    /// The running agent.
    pub agent: Agent,
    /// Its definition.
    pub definition: Arc<AgentDefinition>,
    /// The catalog it uses (for `/skills` and `/<skill>`).
    pub catalog: Catalog,
    /// The model URI, or the note that it runs offline.
    pub model: String,
    /// With `--allow-scripts`: what the kernel enforces on scripts.
    pub scripts: Option<Sandbox>,
}

/// Starts the agent of `args` (inside a Tokio runtime), seeded with
/// `history`.
pub async fn start(
    global: &Global,
    args: &AgentArgs,
    history: Option<History>,
) -> Result<Started, Failure> {
    let dir = sources::kit_dir(&args.agent_dir)?;
    let definition = definition(&dir)?;
    let mut named = vec![dir.clone()];
    for path in &args.skills {
        named.push(sources::kit_dir(path)?);
    }
    // Named here, so loaded; trusted only as the store (or the person) says.
    crate::trust::first_use(&named);
    let mut builder = sources::embedder(global, Catalog::builder());
    for dir in &named {
        builder = builder.provider(Local::new(dir));
    }
    let catalog = sources::mcp(builder, &args.mcp)?
        .provider(sources::github(global)?)
        .provider(ask::provider())
        .build();
    let snapshot = catalog.snapshot().await;
    // A source that cannot be read: one line each, and the agent goes on
    // with the others.
    crate::list::warn_failures(&snapshot);
    let agents = snapshot.agents().map(|a| a.name.to_string()).collect();
    let mut options = AgentOptions::new(catalog.clone())
        .approval(policy(&args.allow, agents))
        .trust(crate::trust::policy());
    let (registry, uri, shown) = model(args.model.as_deref(), &options, &definition)?;
    options = options.registry(registry).model(uri);
    if let Some(history) = history {
        options = options.history(history);
    }
    if let Some(name) = &args.session {
        let store = crate::sessions::store(args.sessions.as_deref(), name)?;
        options = options.session(store, name.clone());
    }
    for (name, endpoint) in args.mcp.servers()? {
        options = options.mcp_server(name, endpoint);
    }
    // Claude Code's variable for the same bound, in tokens.
    if let Some(tokens) = std::env::var("MAX_MCP_OUTPUT_TOKENS")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
    {
        options = options.mcp_output_limit(tokens.saturating_mul(skillkit::agent::CHARS_PER_TOKEN));
    }
    let scripts = args.allow_scripts.then(Sandbox::current);
    if let Some(sandbox) = &scripts {
        check_sandbox(sandbox, args.allow_weaker_sandbox)?;
        // The terminal policy above asks every script call (unless
        // `--allow`ed), so the scripts' own policy adds no second question.
        options = options.scripts(script_options(args.allow_weaker_sandbox));
    }
    let agent = start_agent(Arc::clone(&definition), options)
        .map_err(|e| Failure::failed(crate::explain::agent(&e)))?;
    Ok(Started {
        agent,
        definition,
        catalog,
        model: shown,
        scripts,
    })
}

/// With `--allow-scripts`: refuses to start where the kernel cannot put up
/// every layer of the script sandbox, unless `--allow-weaker-sandbox`.
pub fn check_sandbox(sandbox: &Sandbox, weaker: bool) -> Result<(), Failure> {
    if sandbox.is_full() || weaker {
        return Ok(());
    }
    Err(Failure::failed(format!(
        "--allow-scripts: the script sandbox is incomplete here ({}); run where every layer is \
         available (Linux with user namespaces, Landlock and seccomp), or pass \
         --allow-weaker-sandbox to run scripts with only: {}",
        sandbox.missing().join("; "),
        match sandbox.layers() {
            [] => "nothing".to_owned(),
            layers => layers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        }
    )))
}

/// The options scripts run with from the command line: every call allowed
/// by the scripts' own policy (the caller's policy decides), the trust
/// store hidden from them too.
pub fn script_options(weaker: bool) -> ScriptOptions {
    let mut options = ScriptOptions::new()
        .approval(ApprovalPolicy::allow_all())
        .allow_weaker_sandbox(weaker);
    if let Ok(store) = crate::trust::store() {
        options = options.hide(store.file());
    }
    options
}

/// The root agent of the kit in `dir` (its AGENT.md), or an agent over the
/// folder's skills when it has none.
fn definition(dir: &Path) -> Result<Arc<AgentDefinition>, Failure> {
    let kits = Local::new(dir)
        .load()
        .map_err(|e| Failure::io(format!("{}: {e}", dir.display())))?;
    let Some(kit) = kits.into_iter().next() else {
        return Err(Failure::io(format!(
            "{}: no kit there; give a folder with an AGENT.md or skills",
            dir.display()
        )));
    };
    for diagnostic in kit
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
    {
        err!("{diagnostic}");
    }
    Ok(kit.agent.clone().unwrap_or_else(|| {
        Arc::new(AgentDefinition::new(
            kit.name.to_string(),
            format!("An agent over the skills in {}.", dir.display()),
        ))
    }))
}

/// The registry, the model URI, and how the model is shown: `--model` as
/// given (`scripted://FILE` plays a JSON script); else the definition's
/// model or Claude, offline when its API key is missing.
fn model(
    given: Option<&str>,
    options: &AgentOptions,
    definition: &AgentDefinition,
) -> Result<(Registry, String, String), Failure> {
    if let Some(uri) = given {
        let parsed: ModelUri = uri
            .parse()
            .map_err(|e| Failure::failed(crate::explain::llm(&e)))?;
        if parsed.scheme.as_deref() == Some("scripted") {
            let registry = Registry::new().with("scripted", script(&parsed.model)?);
            return Ok((registry, uri.to_owned(), uri.to_owned()));
        }
        return Ok((Registry::new(), uri.to_owned(), uri.to_owned()));
    }
    let uri = options.model_for(definition);
    let registry = Registry::new();
    let missing_key = registry.resolve(&uri).ok().and_then(|(provider, parsed)| {
        match provider.check(&parsed.options) {
            Err(LlmError::MissingApiKey { variable, .. }) => Some(variable),
            _ => None,
        }
    });
    match missing_key {
        None => Ok((registry, uri.clone(), uri)),
        Some(variable) => Ok((
            Registry::new().with("offline", echo()),
            "offline://echo".into(),
            format!(
                "offline: no API key for {uri} (set {variable}, or pass --model URI); \
                 a scripted model answers by repeating your messages"
            ),
        )),
    }
}

/// The JSON model script at `file` (`scripted://FILE`).
pub fn script(file: &str) -> Result<Scripted, Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failure::io(format!(
            "{file}: cannot read the model script ({e}); `scripted://FILE` names a JSON file"
        ))
    })?;
    Scripted::from_json(&text).map_err(|e| Failure::io(format!("{file}: not a model script: {e}")))
}

/// The offline model: answers every request by repeating the last message.
fn echo() -> Scripted {
    let script = Scripted::new();
    let queue = script.clone();
    script.on_request(move |request| {
        let said = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { text } => Some(one_line(text)),
                _ => None,
            })
            .unwrap_or_default();
        queue.push(Reply::Text(format!("(offline) You said: {said}")));
    })
}

/// Reading a skill, delegating to a sub-agent and asking the person
/// (`terminal:ask`) run at once, as do the tools `--allow` names; every other
/// tool call asks first.
fn policy(allowed: &[String], agents: HashSet<String>) -> ApprovalPolicy {
    let allowed = allowed.to_vec();
    ApprovalPolicy::new(move |call| {
        let free = call.name == ACTIVATE_SKILL
            || call.name == ask::NAME
            || agents.contains(&call.name)
            || allowed.iter().any(|pattern| matches(pattern, &call.name));
        match free {
            true => Approval::Allow,
            false => Approval::Ask,
        }
    })
}

/// Whether `name` matches `pattern`: equal, or a prefix ending in `*`.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The decision for a person's answer: `y`/`yes` approves, anything else
/// denies.
pub fn decision(answer: Option<&str>) -> Decision {
    match answer.map(|a| a.trim().to_ascii_lowercase()) {
        Some(a) if a == "y" || a == "yes" => Decision::Approve,
        Some(_) => Decision::deny("the user said no"),
        None => Decision::deny(
            "no one could be asked; allow it with `--allow NAME` on the skillkit command line",
        ),
    }
}

/// `text` on one line, at most `max` characters.
pub fn shorten(text: &str, max: usize) -> String {
    let flat = one_line(text);
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_and_prefixes() {
        assert!(matches("github:list", "github:list"));
        assert!(!matches("github:list", "github:import"));
        assert!(matches("github:*", "github:import"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn only_yes_approves() {
        assert_eq!(decision(Some(" Y\n")), Decision::Approve);
        assert!(matches!(decision(Some("n")), Decision::Deny { .. }));
        assert!(matches!(decision(Some("")), Decision::Deny { .. }));
        assert!(matches!(decision(None), Decision::Deny { reason } if reason.contains("--allow")));
    }
}
