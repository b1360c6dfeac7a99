//! What an agent did, as OpenTelemetry understands it: the agent's
//! [`tracing`] spans are named and typed as the GenAI semantic conventions
//! say (`invoke_agent {agent}`, `chat {model}`, `execute_tool {tool}`, a
//! skill's activation as `load_skill`), so any `tracing` subscriber sees
//! them, and with the `otel` feature `Otel` exports them (and the GenAI
//! metrics) over OTLP.
//!
//! The attribute names are constants here ([`attr`]): no Rust crate
//! publishes the current GenAI conventions. Message content (the messages,
//! the system prompt, tool arguments and results) is recorded only when
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, as the
//! conventions require ([`capture_content`]). The provider is named
//! `gen_ai.system`, its name in the conventions' release before the newest;
//! with `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` it is
//! `gen_ai.provider.name`, the newest ([`latest_experimental`]).
//!
//! ```
//! use skillkit::telemetry::{attr, capture_content};
//! assert_eq!(attr::OPERATION_NAME, "gen_ai.operation.name");
//! // Off unless the environment opts in.
//! # unsafe { std::env::remove_var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") };
//! assert!(!capture_content());
//! ```

use std::sync::OnceLock;

#[cfg(feature = "otel")]
mod otel;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use otel::{Otel, OtelError};

/// The attribute names of the GenAI semantic conventions SkillKit records.
pub mod attr {
    /// What the span does: `chat`, `invoke_agent`, `execute_tool`.
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The model's vendor (`anthropic`, `openai`, …), newest name.
    pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
    /// The model's vendor, the name before the newest release.
    pub const SYSTEM: &str = "gen_ai.system";
    /// The model asked for.
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The most tokens asked for.
    pub const REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
    /// The sampling temperature asked for.
    pub const REQUEST_TEMPERATURE: &str = "gen_ai.request.temperature";
    /// The model that answered.
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// The vendor's id of the answer.
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    /// Why the model stopped, a string array.
    pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// Input tokens, cache reads and writes included.
    pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Output tokens.
    pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Input tokens read from the prompt cache.
    pub const USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
    /// Input tokens written to the prompt cache.
    pub const USAGE_CACHE_CREATION_INPUT_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
    /// Seconds from the request to the first piece of the answer.
    pub const RESPONSE_TIME_TO_FIRST_CHUNK: &str = "gen_ai.response.time_to_first_chunk";
    /// The agent's name.
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// The agent's id (its place in the conversation: `lead`, `lead/notes:editor`).
    pub const AGENT_ID: &str = "gen_ai.agent.id";
    /// The agent's description.
    pub const AGENT_DESCRIPTION: &str = "gen_ai.agent.description";
    /// The conversation (the session id).
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// The tool called.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The model's id of the call.
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// `function` (in-process), `extension` (an MCP server's), `datastore`.
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    /// The call's arguments (content: opt-in).
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// The call's result (content: opt-in).
    pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    /// The skill activated (the `load_skill` refinement of `execute_tool`).
    pub const SKILL_NAME: &str = "gen_ai.skill.name";
    /// The skill's description.
    pub const SKILL_DESCRIPTION: &str = "gen_ai.skill.description";
    /// Where the skill comes from, as a logical location (never a path).
    pub const SKILL_SOURCE_URI: &str = "gen_ai.skill.source.uri";
    /// The messages sent (content: opt-in), JSON.
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    /// The answer (content: opt-in), JSON.
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    /// The system prompt (content: opt-in), JSON.
    pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
    /// The host of the model's endpoint.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The port of the model's endpoint.
    pub const SERVER_PORT: &str = "server.port";
    /// What went wrong, on a failed span.
    pub const ERROR_TYPE: &str = "error.type";
    /// SkillKit's: how the approval policy decided a tool call.
    pub const APPROVAL: &str = "skillkit.approval.decision";
    /// SkillKit's: how long the call waited for a decision, in seconds.
    pub const APPROVAL_WAIT: &str = "skillkit.approval.wait";
    /// SkillKit's: a script's path inside its skill.
    pub const SCRIPT: &str = "skillkit.script.path";
    /// SkillKit's: a script's exit code.
    pub const SCRIPT_EXIT_CODE: &str = "skillkit.script.exit_code";
    /// SkillKit's: the sandbox layers in force for a script.
    pub const SANDBOX: &str = "skillkit.script.sandbox";
    /// SkillKit's: the MCP server of a tool.
    pub const MCP_SERVER: &str = "skillkit.mcp.server";
}

/// The variable that opts in to message content.
pub const CAPTURE_CONTENT_VARIABLE: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The variable that opts in to the newest experimental names.
pub const STABILITY_OPT_IN_VARIABLE: &str = "OTEL_SEMCONV_STABILITY_OPT_IN";

/// Whether spans carry message content: the messages sent and received, the
/// system prompt, tool arguments and results. Only when
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (read once).
///
/// ```
/// let _recorded = skillkit::telemetry::capture_content();
/// ```
pub fn capture_content() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var(CAPTURE_CONTENT_VARIABLE).is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
    })
}

/// Whether `OTEL_SEMCONV_STABILITY_OPT_IN` lists `gen_ai_latest_experimental`
/// (read once): the provider is then `gen_ai.provider.name`, else
/// `gen_ai.system`.
///
/// ```
/// let _newest = skillkit::telemetry::latest_experimental();
/// ```
pub fn latest_experimental() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var(STABILITY_OPT_IN_VARIABLE).is_ok_and(|v| {
            v.split(',')
                .any(|opt| opt.trim() == "gen_ai_latest_experimental")
        })
    })
}

/// The provider's attribute: `gen_ai.provider.name` with the newest names,
/// else `gen_ai.system`.
#[cfg(feature = "agent")]
pub(crate) fn provider_key() -> &'static str {
    match latest_experimental() {
        true => attr::PROVIDER_NAME,
        false => attr::SYSTEM,
    }
}

/// Records `values` as the string array `key` of `span` (the `otel` bridge
/// keeps the type); without `otel`, as the text field of the same name.
#[cfg(feature = "agent")]
pub(crate) fn record_strings(span: &tracing::Span, key: &'static str, values: &[&str]) {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let values: Vec<opentelemetry::StringValue> =
            values.iter().map(|v| v.to_string().into()).collect();
        span.set_attribute(key, opentelemetry::Value::Array(values.into()));
    }
    #[cfg(not(feature = "otel"))]
    span.record(key, values.join(",").as_str());
}

/// Where `skill` comes from, as a logical location: `skill://KIT/SKILL`
/// (never the folder it was read from).
///
/// ```
/// let skill = skillkit::Skill::new("notes:summarize", "Summarize notes.");
/// assert_eq!(skillkit::telemetry::skill_uri(&skill), "skill://notes/summarize");
/// ```
pub fn skill_uri(skill: &crate::Skill) -> String {
    match skill.name.split_once(':') {
        Some((kit, name)) => format!("skill://{kit}/{name}"),
        None => format!("skill://{}", skill.name),
    }
}

/// The `execute_tool {tool}` span of a call an MCP client made of this
/// server's tool `name`. When the client's request carries W3C trace
/// context (`traceparent`, `tracestate` in its `_meta`), the span continues
/// the client's trace (with the `otel` feature), so a host's trace goes on
/// through SkillKit.
#[cfg(feature = "mcp")]
pub(crate) fn served_tool_span(
    name: &str,
    call_id: &str,
    traceparent: Option<&str>,
    tracestate: Option<&str>,
) -> tracing::Span {
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        skillkit.approval.decision = tracing::field::Empty,
        skillkit.approval.wait = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    if let Some(traceparent) = traceparent
        && !span.is_disabled()
    {
        use opentelemetry::propagation::TextMapPropagator;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let mut carrier = std::collections::HashMap::new();
        carrier.insert("traceparent".to_owned(), traceparent.to_owned());
        if let Some(tracestate) = tracestate {
            carrier.insert("tracestate".to_owned(), tracestate.to_owned());
        }
        let context =
            opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
        let _ = span.set_parent(context);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (traceparent, tracestate);
    span
}

/// Marks `span` failed with `kind` (`error.type`, and the OTel status).
#[cfg(any(feature = "agent", feature = "mcp"))]
pub(crate) fn fail(span: &tracing::Span, kind: &str) {
    span.record(attr::ERROR_TYPE, kind);
    span.record("otel.status_code", "ERROR");
}
