//! Reading one JSON-RPC message from a client, as both transports do: a
//! message that is not JSON gets `-32700 Parse error`, JSON that is not a
//! JSON-RPC message `-32600 Invalid Request`, each with `id` null (or the
//! request's id when it has a readable one) and a message saying what to
//! send instead.

use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
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
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
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
