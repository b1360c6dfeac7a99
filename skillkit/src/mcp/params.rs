//! The answer to a request of a method this server serves whose params do
//! not fit it. rmcp reads such a request as a custom one (its message type
//! tries each method's shape, then the catch-all), which its handler answers
//! `-32601 Method not found`; the method exists, so this server answers
//! `-32602 Invalid params` saying what was wrong and what to send, on every
//! transport. A method it does not serve stays `-32601`.

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ConstString, ErrorCode, GetPromptRequestMethod,
    GetPromptRequestParams, GetSkillRequestMethod, GetSkillRequestParams, InitializeRequestParams,
    InitializeResultMethod, ListPromptsRequestMethod, ListResourceTemplatesRequestMethod,
    ListResourcesRequestMethod, ListSkillsRequestMethod, ListToolsRequestMethod,
    PaginatedRequestParams, ReadResourceDirectoryRequestMethod, ReadResourceDirectoryRequestParams,
    ReadResourceRequestMethod, ReadResourceRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What the params of a list method look like.
const PAGE: &str = "no params for the first page, then {\"cursor\": <the nextCursor of the \
    previous page>}";

/// The error answering `method` with `params`, which rmcp could not read as
/// that method's request.
pub(super) fn refuse(method: &str, params: Option<&Value>) -> ErrorData {
    let (problem, shape) = match method {
        CallToolRequestMethod::VALUE => (
            problem::<CallToolRequestParams>(params),
            "{\"name\": <a tool's name from tools/list>, \"arguments\": {<the tool's input, an \
             object>}}",
        ),
        GetPromptRequestMethod::VALUE => (
            problem::<GetPromptRequestParams>(params),
            "{\"name\": <a prompt's name from prompts/list>, \"arguments\": {\"arguments\": \
             <text>}}",
        ),
        ReadResourceRequestMethod::VALUE => (
            problem::<ReadResourceRequestParams>(params),
            "{\"uri\": <a URI from resources/list, skill://<kit>/<skill>/<path>>}",
        ),
        GetSkillRequestMethod::VALUE => (
            problem::<GetSkillRequestParams>(params),
            "{\"uri\": <a skill's URI from skills/list, skill://<kit>/<skill>/SKILL.md>}",
        ),
        ReadResourceDirectoryRequestMethod::VALUE => (
            problem::<ReadResourceDirectoryRequestParams>(params),
            "{\"uri\": <a skill's folder, skill://<kit>/<skill>, or a folder in it>}",
        ),
        ListToolsRequestMethod::VALUE
        | ListSkillsRequestMethod::VALUE
        | ListPromptsRequestMethod::VALUE
        | ListResourcesRequestMethod::VALUE
        | ListResourceTemplatesRequestMethod::VALUE => {
            (problem::<PaginatedRequestParams>(params), PAGE)
        }
        InitializeResultMethod::VALUE => (
            problem::<InitializeRequestParams>(params),
            "{\"protocolVersion\": <a revision such as \"2025-06-18\">, \"capabilities\": {}, \
             \"clientInfo\": {\"name\": <text>, \"version\": <text>}}",
        ),
        _ => return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None),
    };
    ErrorData::invalid_params(
        format!("Invalid params of `{method}`: {problem}; send params {shape}"),
        None,
    )
}

/// What is wrong with `params` as a `P`, in serde's words.
fn problem<P: DeserializeOwned>(params: Option<&Value>) -> String {
    let Some(params) = params else {
        return "there are no params".to_owned();
    };
    match serde_json::from_value::<P>(params.clone()) {
        Err(e) => e.to_string(),
        // Read alone they fit: what rmcp refused is around them.
        Ok(_) => "they do not fit the method's request".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_known_method_is_invalid_params_and_says_what_to_send() {
        let error = refuse("tools/call", Some(&json!({"name": "x", "arguments": "y"})));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("invalid type: string"), "{error:?}");
        assert!(error.message.contains("\"arguments\": {"), "{error:?}");
        let error = refuse("resources/read", None);
        assert!(error.message.contains("there are no params"), "{error:?}");
        let error = refuse("prompts/get", Some(&json!({})));
        assert!(error.message.contains("missing field `name`"), "{error:?}");
    }

    #[test]
    fn an_unknown_method_is_not_found() {
        let error = refuse("tools/frobnicate", None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(error.message, "tools/frobnicate");
    }
}
