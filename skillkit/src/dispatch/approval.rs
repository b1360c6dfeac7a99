//! Human in the loop: the approval policy that decides each tool call, the
//! [`ToolRequest`] it decides on (from the agent at an [`AgentPath`]), why a
//! call waits ([`InputKind`]), and the [`Decision`] a caller answers a
//! waiting call with. The agent and the MCP server's scripts share them.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use serde::{Serialize, Serializer};

/// A tool call about to run, as the approval policy sees it.
///
/// ```
/// use skillkit::approval::{AgentPath, ToolRequest};
/// let request = ToolRequest {
///     agent: AgentPath::root(),
///     call_id: "call_1".into(),
///     name: "files:delete".into(),
///     input: serde_json::json!({"path": "a.txt"}),
/// };
/// assert_eq!(request.name, "files:delete");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRequest {
    /// The agent making the call.
    pub agent: AgentPath,
    /// The call's id.
    pub call_id: String,
    /// The tool: a skill's full name, a sub-agent's name or `activate_skill`.
    pub name: String,
    /// The input the model gave.
    pub input: Value,
}

/// What the approval policy says of one tool call.
///
/// ```
/// use skillkit::approval::Approval;
/// let verdict = Approval::deny("deleting files is not allowed here");
/// assert!(matches!(verdict, Approval::Deny(reason) if reason.contains("deleting")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it.
    Allow,
    /// Do not run it; the model sees this reason as the call's error result.
    Deny(String),
    /// Ask the caller: an [`InputRequested`](crate::agent::EventKind::InputRequested)
    /// event, answered with [`Agent::respond`](crate::agent::AgentController::respond).
    Ask,
}

impl Approval {
    /// A denial with `reason`.
    ///
    /// ```
    /// assert_eq!(skillkit::approval::Approval::deny("no"), skillkit::approval::Approval::Deny("no".into()));
    /// ```
    pub fn deny(reason: impl Into<String>) -> Self {
        Approval::Deny(reason.into())
    }

    /// The stricter of two verdicts: a denial over a question over an
    /// allowance (the first denial's reason is kept).
    ///
    /// ```
    /// use skillkit::approval::Approval;
    /// assert_eq!(Approval::Allow.stricter(Approval::Ask), Approval::Ask);
    /// assert_eq!(Approval::Ask.stricter(Approval::deny("no")), Approval::deny("no"));
    /// ```
    pub fn stricter(self, other: Approval) -> Approval {
        match (self, other) {
            (Approval::Deny(reason), _) | (_, Approval::Deny(reason)) => Approval::Deny(reason),
            (Approval::Ask, _) | (_, Approval::Ask) => Approval::Ask,
            (Approval::Allow, Approval::Allow) => Approval::Allow,
        }
    }
}

/// Decides every tool call before it runs. The default allows all.
///
/// ```
/// use skillkit::approval::{Approval, ApprovalPolicy};
/// let policy = ApprovalPolicy::new(|call| match call.name.as_str() {
///     "files:delete" => Approval::Ask,
///     _ => Approval::Allow,
/// });
/// # let _ = policy;
/// ```
#[derive(Clone)]
pub struct ApprovalPolicy(Arc<dyn Fn(&ToolRequest) -> Approval + Send + Sync>);

impl ApprovalPolicy {
    /// A policy from a function of the call.
    ///
    /// ```
    /// let deny_all = skillkit::approval::ApprovalPolicy::new(|_| skillkit::approval::Approval::deny("read-only session"));
    /// # let _ = deny_all;
    /// ```
    pub fn new(decide: impl Fn(&ToolRequest) -> Approval + Send + Sync + 'static) -> Self {
        ApprovalPolicy(Arc::new(decide))
    }

    /// Allows every call.
    ///
    /// ```
    /// let policy = skillkit::approval::ApprovalPolicy::allow_all();
    /// # let _ = policy;
    /// ```
    pub fn allow_all() -> Self {
        ApprovalPolicy::new(|_| Approval::Allow)
    }

    /// The verdict on `request`.
    pub(crate) fn decide(&self, request: &ToolRequest) -> Approval {
        (self.0)(request)
    }
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy::allow_all()
    }
}

impl fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalPolicy(..)")
    }
}

/// The caller's answer to a waiting call
/// ([`InputRequested`](crate::agent::EventKind::InputRequested)).
///
/// For an approval, [`Approve`](Decision::Approve) runs the call and
/// [`Deny`](Decision::Deny) gives the model the reason as an error result. For
/// a pending tool, the decision goes to [`Tool::resume`](crate::Tool::resume):
/// `Approve` as `true`, `Answer(value)` as `value`; `Deny` does not resume and
/// the model sees the reason.
///
/// ```
/// use skillkit::approval::Decision;
/// let answers = [Decision::Approve, Decision::deny("not now"), Decision::Answer(serde_json::json!({"choice": 2}))];
/// assert_eq!(answers.len(), 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Yes: run (or resume) the call.
    Approve,
    /// No, with a reason the model sees.
    Deny {
        /// Why.
        reason: String,
    },
    /// A value for the pending tool's `resume` (for an approval: `true` runs
    /// the call, anything else denies it).
    Answer(Value),
}

impl Decision {
    /// A denial with `reason`.
    ///
    /// ```
    /// assert!(matches!(skillkit::approval::Decision::deny("no"), skillkit::approval::Decision::Deny { .. }));
    /// ```
    pub fn deny(reason: impl Into<String>) -> Self {
        Decision::Deny {
            reason: reason.into(),
        }
    }
}

/// Whoever answers for a tool call's approval: where the call comes from,
/// the approval policy's verdict, and asking the caller. The part of a
/// tool call's host (the agent, the MCP server) that a skill's
/// `` !`command` `` lines need.
pub(crate) trait Approver: Sync {
    /// The agent making the call (the root path for a server).
    fn path(&self) -> &AgentPath;
    /// The approval policy's verdict on `request`.
    fn decide(&self, request: &ToolRequest) -> Approval;
    /// Asks the caller about `request` and waits for the decision; `Err`
    /// (the call's result) when it cannot be asked.
    fn ask(
        &self,
        request: &ToolRequest,
        kind: InputKind,
    ) -> impl Future<Output = Result<Decision, String>>;
}

/// Which agent an event comes from: the root agent (an empty path), or a
/// sub-agent by the names of the agents that delegated to it
/// (`files:summarize`, then `files:summarize/notes:editor` one level down).
///
/// ```
/// let root = skillkit::approval::AgentPath::root();
/// let child = root.child("files:summarize");
/// assert!(root.is_root());
/// assert_eq!(child.to_string(), "files:summarize");
/// assert_eq!(child.child("notes:editor").depth(), 2);
/// ```
///
/// Serialised as the list of names (`[]` for the root).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AgentPath(Arc<[String]>);

impl Serialize for AgentPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

impl AgentPath {
    /// The root agent.
    ///
    /// ```
    /// assert_eq!(skillkit::approval::AgentPath::root().depth(), 0);
    /// ```
    pub fn root() -> Self {
        AgentPath::default()
    }

    /// The path of sub-agent `name` called by this agent.
    ///
    /// ```
    /// let path = skillkit::approval::AgentPath::root().child("a:b");
    /// assert_eq!(path.names(), ["a:b"]);
    /// ```
    pub fn child(&self, name: &str) -> Self {
        let mut names = self.0.to_vec();
        names.push(name.to_owned());
        AgentPath(names.into())
    }

    /// Whether this is the root agent.
    ///
    /// ```
    /// assert!(!skillkit::approval::AgentPath::root().child("a:b").is_root());
    /// ```
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// How many delegations deep the agent runs (0 for the root).
    ///
    /// ```
    /// assert_eq!(skillkit::approval::AgentPath::root().child("a:b").depth(), 1);
    /// ```
    pub fn depth(&self) -> usize {
        self.0.len()
    }

    /// The names of the sub-agents, outermost first.
    ///
    /// ```
    /// assert!(skillkit::approval::AgentPath::root().names().is_empty());
    /// ```
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

impl fmt::Display for AgentPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.is_root() {
            true => f.write_str("root"),
            false => f.write_str(&self.0.join("/")),
        }
    }
}

/// Why a tool call waits for the caller.
///
/// ```
/// let kind = skillkit::approval::InputKind::Pending { state: serde_json::json!({"confirm": "delete?"}) };
/// assert!(matches!(kind, skillkit::approval::InputKind::Pending { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InputKind {
    /// The approval policy asks whether the call may run.
    Approval,
    /// The tool returned [`ToolOutcome::Pending`](crate::ToolOutcome::Pending)
    /// with this state; the decision goes to its `resume`.
    Pending {
        /// The state the tool kept.
        state: Value,
    },
}
