//! Reading one JSON-RPC message from a client, as both transports do: a
//! message that is not JSON gets `-32700 Parse error`, JSON that is not a
//! JSON-RPC message `-32600 Invalid Request`, each with `id` null (or the
//! request's id when it has a readable one) and a message saying what to
//! send instead. A list request whose params rmcp drops as unreadable (it
//! reads `{"cursor": 7}` as no params, the first page) gets `-32602 Invalid
//! params` here, as the other methods' wrong params get it from the server.

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage,
    JsonRpcRequest, PaginatedRequestParams,
};
use serde_json::{Value, json};

/// What a client sent, read.
pub(super) enum Read {
    /// A message for the server.
    Message(Box<ClientJsonRpcMessage>),
    /// A malformed message: the error response (one JSON object,
    /// serialized), and whether the message was a notification, which stdio
    /// drops unanswered (JSON-RPC answers no notification) and HTTP refuses
    /// with its status.
    Malformed { answer: String, notification: bool },
    /// A well-formed request with params its method cannot take: the error
    /// response (`-32602`, with the request's id), a JSON-RPC answer like
    /// any other (HTTP status 200).
    InvalidParams { answer: String },
}

/// What a message of this server looks like, for the error messages.
const SHAPE: &str = "send one JSON-RPC 2.0 message, such as \
    {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}";

/// Reads `bytes`: one message (a line of stdio, the body of an HTTP POST).
pub(super) fn read(bytes: &[u8]) -> Read {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // rmcp's message type takes only an object with `"jsonrpc": "2.0"`, so a
    // message it reads is one the checks below would pass: one parse for a
    // well-formed message, the diagnosis only for a malformed one.
    if let Some(message) = tool_call(bytes) {
        return Read::Message(Box::new(message));
    }
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        if let Some(answer) = dropped_params(&message, bytes) {
            return Read::InvalidParams { answer };
        }
        return Read::Message(Box::new(message));
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => {
            return Read::Malformed {
                answer: error(
                    ErrorCode::PARSE_ERROR,
                    None,
                    format!("Parse error: the message is not JSON ({e}); {SHAPE}"),
                ),
                notification: false,
            };
        }
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        _ => None,
    };
    let notification = value.get("method").is_some() && value.get("id").is_none();
    let problem = match value {
        Value::Array(_) => "a batch (an array) is not accepted".to_owned(),
        Value::Object(ref object) if object.get("jsonrpc") != Some(&json!("2.0")) => {
            "`jsonrpc` must be \"2.0\"".to_owned()
        }
        Value::Object(_) => match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(message) => return Read::Message(Box::new(message)),
            Err(e) => e.to_string(),
        },
        _ => "the message is not a JSON object".to_owned(),
    };
    Read::Malformed {
        answer: error(
            ErrorCode::INVALID_REQUEST,
            id,
            format!("Invalid Request: {problem}; {SHAPE}"),
        ),
        notification,
    }
}

/// `bytes` read as a `tools/call` request, when that is what they are.
///
/// The request a client sends most, read as itself: rmcp's `ClientRequest`
/// tries its methods one by one, making an error (a formatted message) for
/// each one the request is not, which made reading a `tools/call` the
/// largest part of what the server spent on an activation over HTTP. The
/// request type is the one that `ClientRequest` reads for `tools/call`,
/// so the message is the same; anything it does not read (another method,
/// a malformed message) goes the general way.
fn tool_call(bytes: &[u8]) -> Option<ClientJsonRpcMessage> {
    memchr::memmem::find(bytes, b"\"tools/call\"")?;
    let request = serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(bytes).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: request.jsonrpc,
        id: request.id,
        request: ClientRequest::CallToolRequest(request.request),
    }))
}

/// Whether `message` opens a `subscriptions/listen` stream.
pub(super) fn is_listen(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(request)
        if matches!(request.request, ClientRequest::SubscriptionsListenRequest(_)))
}

/// The `-32602` answer to a list request read without params when `bytes`
/// has params, which rmcp dropped because they are not a page's.
fn dropped_params(message: &ClientJsonRpcMessage, bytes: &[u8]) -> Option<String> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let dropped = match &request.request {
        ClientRequest::ListToolsRequest(r) => r.params.is_none(),
        ClientRequest::ListPromptsRequest(r) => r.params.is_none(),
        ClientRequest::ListResourcesRequest(r) => r.params.is_none(),
        ClientRequest::ListResourceTemplatesRequest(r) => r.params.is_none(),
        ClientRequest::ListSkillsRequest(r) => r.params.is_none(),
        _ => false,
    };
    if !dropped {
        return None;
    }
    memchr::memmem::find(bytes, b"\"params\"")?;
    let params = serde_json::from_slice::<Value>(bytes)
        .ok()?
        .get("params")?
        .clone();
    if params.is_null() || serde_json::from_value::<PaginatedRequestParams>(params.clone()).is_ok()
    {
        return None;
    }
    let refused = super::params::refuse(request.request.method(), Some(&params));
    let id = serde_json::to_value(&request.id).ok();
    Some(error(refused.code, id, refused.message.into_owned()))
}

/// A JSON-RPC error response, serialized (`id` null when the request's id is
/// not known).
fn error(code: ErrorCode, id: Option<Value>, message: String) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code.0, "message": message},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &[u8]) -> Value {
        match read(bytes) {
            Read::Malformed { answer, .. } => serde_json::from_str(&answer).unwrap(),
            Read::Message(m) => panic!("read as a message: {m:?}"),
            Read::InvalidParams { answer } => panic!("read as invalid params: {answer}"),
        }
    }

    #[test]
    fn a_list_request_with_params_rmcp_drops_is_invalid_params() {
        let line =
            br#"{"jsonrpc": "2.0", "id": 5, "method": "prompts/list", "params": {"cursor": 7}}"#;
        let Read::InvalidParams { answer } = read(line) else {
            panic!("not refused");
        };
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], 5);
        assert_eq!(answer["error"]["code"], -32602);
        for fine in [
            &br#"{"jsonrpc": "2.0", "id": 5, "method": "prompts/list", "params": {"cursor": "c1.YQ"}}"#[..],
            br#"{"jsonrpc": "2.0", "id": 5, "method": "prompts/list", "params": null}"#,
            br#"{"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}"#,
        ] {
            assert!(matches!(read(fine), Read::Message(_)));
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_id_null() {
        let answer = refused(b"this is not json");
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], -32700);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("Parse error: the message is not JSON"));
        assert!(message.contains("send one JSON-RPC 2.0 message"));
        assert_eq!(refused(b"{\"jsonrpc\": ")["error"]["code"], -32700);
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        for (bytes, says) in [
            (&b"[1, 2]"[..], "a batch"),
            (b"42", "not a JSON object"),
            (
                b"{\"id\": 3, \"method\": \"tools/list\"}",
                "`jsonrpc` must be",
            ),
            (b"{\"jsonrpc\": \"2.0\", \"id\": 3}", "Invalid Request"),
        ] {
            let answer = refused(bytes);
            assert_eq!(answer["error"]["code"], -32600, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{message}");
        }
        assert_eq!(refused(b"{\"id\": 3}")["id"], 3);
        assert_eq!(refused(b"{\"id\": [3]}")["id"], Value::Null);
    }

    #[test]
    fn a_tool_call_is_read_as_the_general_way_reads_it() {
        for line in [
            &br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "activate_skill", "arguments": {"name": "k:s", "arguments": "x"}}}"#[..],
            br#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "t", "_meta": {"progressToken": 3}}}"#,
            br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "task": {"ttl": 5}}}"#,
        ] {
            let fast = tool_call(line).expect("read as a tool call");
            let general = serde_json::from_slice::<ClientJsonRpcMessage>(line).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&general).unwrap()
            );
            let Read::Message(read) = read(line) else {
                panic!("not read")
            };
            assert!(matches!(*read, JsonRpcMessage::Request(ref r)
                if matches!(r.request, ClientRequest::CallToolRequest(_))));
        }
        // Another method naming `tools/call` in its params, and a tool call
        // that is not one, go the general way, which tells what they are.
        let prompt = br#"{"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "p", "arguments": {"x": "tools/call"}}}"#;
        assert!(tool_call(prompt).is_none());
        assert!(matches!(read(prompt), Read::Message(m)
            if matches!(*m, JsonRpcMessage::Request(ref r)
                if matches!(r.request, ClientRequest::GetPromptRequest(_)))));
        let wrong = br#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": "no"}}"#;
        assert!(tool_call(wrong).is_none());
        let notification = br#"{"jsonrpc": "2.0", "method": "tools/call"}"#;
        assert!(tool_call(notification).is_none());
    }

    #[test]
    fn messages_are_read_and_bad_notifications_told_apart() {
        let line = b"\xEF\xBB\xBF{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}";
        assert!(matches!(read(line), Read::Message(_)));
        assert!(matches!(
            read(b"{\"jsonrpc\": \"1.0\", \"method\": \"notifications/x\"}"),
            Read::Malformed {
                notification: true,
                ..
            }
        ));
    }
}
