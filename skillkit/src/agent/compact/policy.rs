//! [`CompactionPolicy`]: when and how an agent keeps its conversation
//! within the model's context window, and the defaults it starts from.

/// The share of the context window, in percent, past which a conversation
/// is compacted, unless set.
pub const DEFAULT_COMPACT_AT_PERCENT: u8 = 80;
/// The context window assumed for a model SkillKit does not know, in tokens,
/// unless set ([`CompactionPolicy::context_window`]).
pub const DEFAULT_CONTEXT_WINDOW: usize = 128_000;
/// The most tokens of one skill re-attached at a compaction, unless set
/// (Claude Code's limit).
pub const DEFAULT_SKILL_TOKENS: usize = 5_000;
/// The most tokens of all the skills re-attached at a compaction, unless set
/// (Claude Code's limit).
pub const DEFAULT_SKILLS_TOKENS: usize = 25_000;
/// How many of the latest tool results clearing leaves alone, unless set.
pub const DEFAULT_KEEP_TOOL_RESULTS: usize = 3;

/// How an agent keeps its conversation within the model's context window
/// ([`AgentOptions::compaction`](crate::agent::AgentOptions::compaction)).
///
/// Before each model request the agent estimates its size (the model's own
/// counts of the last request, scaled to what was added since; four
/// characters a token before the first answer). Past
/// [`at_percent`](Self::at_percent) of the window it first clears the oldest
/// tool results (never an `activate_skill` result, never the latest
/// [`keep_tool_results`](Self::keep_tool_results)); when that does not bring
/// the request under half that size, the model summarises the conversation,
/// and the latest activation of each skill in use is re-attached after the
/// summary, latest first, each cut to [`skill_budget`](Self::skill_budget)
/// and all within [`skills_budget`](Self::skills_budget); the skills that do
/// not fit are named, for the model to activate again.
///
/// ```
/// use skillkit::agent::{AgentOptions, CompactionPolicy};
/// # let options = AgentOptions::new(skillkit::Catalog::builder().build());
/// let options = options.compaction(
///     CompactionPolicy::new().at_percent(70).skill_budget(4_000).skills_budget(20_000),
/// );
/// let never = CompactionPolicy::off();
/// ```
#[derive(Debug, Clone)]
pub struct CompactionPolicy {
    pub(crate) on: bool,
    pub(crate) at_percent: u8,
    pub(crate) window: Option<usize>,
    pub(crate) skill_tokens: usize,
    pub(crate) skills_tokens: usize,
    pub(crate) clear_tool_results: bool,
    pub(crate) keep_tool_results: usize,
    pub(crate) server_clearing: bool,
    pub(crate) instructions: Option<String>,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            on: true,
            at_percent: DEFAULT_COMPACT_AT_PERCENT,
            window: None,
            skill_tokens: DEFAULT_SKILL_TOKENS,
            skills_tokens: DEFAULT_SKILLS_TOKENS,
            clear_tool_results: true,
            keep_tool_results: DEFAULT_KEEP_TOOL_RESULTS,
            server_clearing: false,
            instructions: None,
        }
    }
}

impl CompactionPolicy {
    /// The default policy: compaction on, at
    /// [`DEFAULT_COMPACT_AT_PERCENT`] of the window.
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new();
    /// ```
    pub fn new() -> Self {
        CompactionPolicy::default()
    }

    /// Never compacts on its own (a request past the window then fails as
    /// the model refuses it); [`Agent::compact`](crate::agent::Agent::compact)
    /// still does.
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::off();
    /// ```
    pub fn off() -> Self {
        CompactionPolicy {
            on: false,
            ..CompactionPolicy::default()
        }
    }

    /// Compacts past `percent` of the context window (1 to 100).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().at_percent(60);
    /// ```
    pub fn at_percent(mut self, percent: u8) -> Self {
        self.at_percent = percent.clamp(1, 100);
        self
    }

    /// The model's context window in tokens, for a model SkillKit does not
    /// know or one served with a smaller window.
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().context_window(32_768);
    /// ```
    pub fn context_window(mut self, tokens: usize) -> Self {
        self.window = Some(tokens.max(1));
        self
    }

    /// The most tokens of one skill re-attached ([`DEFAULT_SKILL_TOKENS`]).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().skill_budget(8_000);
    /// ```
    pub fn skill_budget(mut self, tokens: usize) -> Self {
        self.skill_tokens = tokens;
        self
    }

    /// The most tokens of all skills re-attached ([`DEFAULT_SKILLS_TOKENS`]).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().skills_budget(40_000);
    /// ```
    pub fn skills_budget(mut self, tokens: usize) -> Self {
        self.skills_tokens = tokens;
        self
    }

    /// Whether old tool results are cleared before the conversation is
    /// summarised (on by default).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().clear_tool_results(false);
    /// ```
    pub fn clear_tool_results(mut self, clear: bool) -> Self {
        self.clear_tool_results = clear;
        self
    }

    /// Lets the model's API clear old tool results itself, where the adapter
    /// can ask for it (Anthropic's `clear_tool_uses` context edit, past
    /// half the compaction size, `activate_skill` results excluded), instead
    /// of the agent; the summary stays the agent's. Other adapters ignore
    /// the request, so there only the summary keeps the conversation in the
    /// window.
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().server_clearing(true);
    /// ```
    pub fn server_clearing(mut self, on: bool) -> Self {
        self.server_clearing = on;
        self
    }

    /// How many of the latest tool results clearing leaves alone
    /// ([`DEFAULT_KEEP_TOOL_RESULTS`]).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().keep_tool_results(5);
    /// ```
    pub fn keep_tool_results(mut self, results: usize) -> Self {
        self.keep_tool_results = results;
        self
    }

    /// What the summary must keep, besides what it always does (the
    /// requests, decisions, facts, work done and left to do).
    ///
    /// ```
    /// let policy = skillkit::agent::CompactionPolicy::new().instructions("Keep every order number.");
    /// ```
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
}
