//! A skill's scripts, run when the application allows it: the
//! `run_skill_script {skill, script, args, stdin}` tool an agent (or the MCP
//! server) offers once [`ScriptOptions`] are given, and [`run_script`] for
//! running one directly.
//!
//! What a script gets, and what bounds it:
//!
//! * only a file inside its skill's folder (resolved as every skill file is:
//!   `..`, absolute paths, hidden files and symlinks leading outside are
//!   refused), run by the interpreter its `#!` line or extension names
//!   (`python3`, `bash`, `sh`, `node`; anything else is refused);
//! * a working folder: the one the application names
//!   ([`ScriptOptions::working_dir`]), else a temporary folder created on the
//!   conversation's first call and removed when the agent ends;
//! * a scrubbed environment: only `PATH`, `LANG`, `LC_ALL`, `TERM=dumb`,
//!   `HOME` and `TMPDIR` (both the working folder), `SKILL_DIR` and
//!   `CLAUDE_SKILL_DIR`; no API key or other variable of this process;
//! * a session of its own, so no controlling terminal: it cannot type into
//!   the terminal the application runs in (`TIOCSTI`), read from it or take
//!   it over, on any Unix and whatever the sandbox's layers;
//! * its own process group, killed whole (`SIGKILL`) at the timeout, when the
//!   call is dropped, when the script ends (nothing it started in the
//!   background survives the call), and when the group holds more than
//!   [`ScriptOptions::max_processes`] processes (counted in `/proc` every
//!   100 ms, Linux only);
//! * stdout and stderr kept up to [`ScriptOptions::max_output`] bytes each
//!   (the rest is read and dropped, and the result says how much there was);
//! * on Linux, a sandbox of three layers put up in the child before the
//!   interpreter starts ([`Sandbox`], described in full there): namespaces of
//!   its own (the file system read-only outside the working folder, metadata
//!   included; the secret places of [`ScriptOptions::hide`] empty; `/proc`
//!   showing its own processes only; no network; no process alive after the
//!   call, whatever it did to its session or group), Landlock (writes only
//!   in the working folder), and a seccomp filter (no socket of any family:
//!   only connected UNIX socket pairs between its own processes; no
//!   `io_uring`, keyrings, mounts or namespaces). Where the kernel cannot put
//!   up a layer, the script is not run unless
//!   [`ScriptOptions::allow_weaker_sandbox`] says to; every result says
//!   exactly which layers were in force.
//!
//! Limits to know: the process count is polled, so a fork bomb may briefly
//! exceed it before it is killed. What a script writes in its working
//! folder is not bounded (only the timeout ends it). Reads outside the
//! hidden places stay allowed (interpreters need their libraries). Scripts
//! run on Unix only; elsewhere a call is an error result saying so, and on
//! Unix systems other than Linux there is no kernel sandbox (a run needs
//! [`ScriptOptions::allow_weaker_sandbox`]).

// The one module of the crate with `unsafe`: the runner's session and
// process group, and the sandbox put up between `fork` and `exec` (raw
// system calls, each block with its `SAFETY:` comment).
#![allow(unsafe_code)]

mod dynamic;
mod interpreter;
mod run;
mod sandbox;
pub(crate) mod tool;

pub(crate) use dynamic::expand;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::dispatch::approval::{Approval, ApprovalPolicy};

pub use run::{Captured, Ending, ScriptError, ScriptOutput, run_script};
pub use sandbox::{Layer, Sandbox};
pub use tool::RUN_SKILL_SCRIPT;

/// How long a script may run, unless set.
pub const DEFAULT_SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// How many bytes of stdout (and of stderr) a result keeps, unless set.
pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024;
/// How many processes a script's group may hold, unless set.
pub const DEFAULT_MAX_PROCESSES: usize = 64;
/// The places, relative to the user's home folder, that a script cannot
/// read unless the application says otherwise ([`ScriptOptions::hidden`]):
/// keys and the credentials of the usual command-line tools.
pub const DEFAULT_HIDDEN: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pgpass",
];

/// Turns on `run_skill_script` and says how scripts run.
///
/// By default every call is asked ([`Approval::Ask`]) whatever the agent's
/// own policy says: a call runs only when both the agent's policy
/// ([`AgentOptions::approval`](crate::agent::AgentOptions::approval)) and
/// this one allow it; the stricter verdict wins.
///
/// ```
/// use std::time::Duration;
/// use skillkit::approval::ApprovalPolicy;
/// use skillkit::script::ScriptOptions;
///
/// let options = ScriptOptions::new()
///     .timeout(Duration::from_secs(10))
///     .max_output(16 * 1024)
///     .approval(ApprovalPolicy::allow_all()); // the application vets scripts itself
/// assert_eq!(options.timeout_limit(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone)]
pub struct ScriptOptions {
    pub(crate) working_dir: Option<PathBuf>,
    pub(crate) timeout: Duration,
    pub(crate) max_output: usize,
    pub(crate) max_processes: usize,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) allow_weaker_sandbox: bool,
    pub(crate) hidden: Vec<PathBuf>,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            working_dir: None,
            timeout: DEFAULT_SCRIPT_TIMEOUT,
            max_output: DEFAULT_MAX_OUTPUT,
            max_processes: DEFAULT_MAX_PROCESSES,
            approval: ApprovalPolicy::new(|_| Approval::Ask),
            allow_weaker_sandbox: false,
            hidden: default_hidden(),
        }
    }
}

impl ScriptOptions {
    /// The defaults: a temporary working folder, [`DEFAULT_SCRIPT_TIMEOUT`],
    /// [`DEFAULT_MAX_OUTPUT`], [`DEFAULT_MAX_PROCESSES`], every call asked.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new();
    /// # let _ = options;
    /// ```
    pub fn new() -> Self {
        ScriptOptions::default()
    }

    /// Runs scripts in `dir` (created if missing) instead of a temporary
    /// folder; it is kept when the agent ends. A script may change anything
    /// in it, so give a folder of the scripts' own: in a project, a script
    /// could change what other tools later run outside the sandbox (its
    /// `.git/hooks`, an `.envrc`).
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().working_dir("/srv/agent-work");
    /// # let _ = options;
    /// ```
    pub fn working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = Some(dir.into());
        self
    }

    /// How long a script may run before its process group is killed.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().timeout(std::time::Duration::from_secs(5));
    /// # let _ = options;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The timeout set (or the default).
    pub fn timeout_limit(&self) -> Duration {
        self.timeout
    }

    /// How many bytes of stdout, and of stderr, a result keeps.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().max_output(4096);
    /// # let _ = options;
    /// ```
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = bytes;
        self
    }

    /// How many processes a script's group may hold before it is killed
    /// (at least 1).
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().max_processes(16);
    /// # let _ = options;
    /// ```
    pub fn max_processes(mut self, processes: usize) -> Self {
        self.max_processes = processes.max(1);
        self
    }

    /// The policy for script calls, consulted after the agent's own; the
    /// stricter verdict wins. The default asks every call.
    ///
    /// ```
    /// use skillkit::approval::{Approval, ApprovalPolicy};
    /// let options = skillkit::script::ScriptOptions::new()
    ///     .approval(ApprovalPolicy::new(|call| match call.input["skill"].as_str() {
    ///         Some("pdf:fill") => Approval::Allow,
    ///         _ => Approval::Ask,
    ///     }));
    /// # let _ = options;
    /// ```
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Runs scripts even where the kernel cannot put up every layer of the
    /// sandbox ([`Sandbox::current`] says which); each result then says
    /// which layers were in force. By default such a run is refused, with
    /// what is missing.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().allow_weaker_sandbox(true);
    /// # let _ = options;
    /// ```
    pub fn allow_weaker_sandbox(mut self, allow: bool) -> Self {
        self.allow_weaker_sandbox = allow;
        self
    }

    /// Hides `path` from scripts too (a folder shows empty, a file shows
    /// nothing), besides [`DEFAULT_HIDDEN`] under the home folder. Enforced
    /// by the namespace layer; a path that does not exist when a script
    /// starts is not covered, and the working folder is never hidden.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().hide("/etc/app/secrets");
    /// assert!(options.hidden_paths().iter().any(|p| p.ends_with("secrets")));
    /// ```
    pub fn hide(mut self, path: impl Into<PathBuf>) -> Self {
        self.hidden.push(path.into());
        self
    }

    /// Hides exactly `paths` (replacing [`DEFAULT_HIDDEN`] and what
    /// [`hide`](Self::hide) added); empty hides nothing.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new().hidden(["/srv/keys"]);
    /// assert_eq!(options.hidden_paths(), [std::path::Path::new("/srv/keys")]);
    /// ```
    pub fn hidden<P: Into<PathBuf>>(mut self, paths: impl IntoIterator<Item = P>) -> Self {
        self.hidden = paths.into_iter().map(Into::into).collect();
        self
    }

    /// The paths hidden from scripts.
    ///
    /// ```
    /// let options = skillkit::script::ScriptOptions::new();
    /// # let _ = options.hidden_paths();
    /// ```
    pub fn hidden_paths(&self) -> &[PathBuf] {
        &self.hidden
    }
}

/// [`DEFAULT_HIDDEN`] under the user's home folder (none without `HOME`).
fn default_hidden() -> Vec<PathBuf> {
    match std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        Some(home) => DEFAULT_HIDDEN
            .iter()
            .map(|place| Path::new(&home).join(place))
            .collect(),
        None => Vec::new(),
    }
}

/// Scripts turned on for one conversation: the options and the working
/// folder its calls share.
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) options: ScriptOptions,
    /// The temporary folder, once the first call created it; removed when
    /// this is dropped (the agent ends).
    temp: Mutex<Option<tempfile::TempDir>>,
}

impl Scripts {
    pub(crate) fn new(options: ScriptOptions) -> Scripts {
        Scripts {
            options,
            temp: Mutex::new(None),
        }
    }

    /// The working folder, created on first use.
    pub(crate) fn working_dir(&self) -> Result<PathBuf, String> {
        let cannot =
            |e: std::io::Error| format!("the scripts' working folder cannot be made ({e})");
        if let Some(dir) = &self.options.working_dir {
            std::fs::create_dir_all(dir).map_err(cannot)?;
            return std::fs::canonicalize(dir).map_err(cannot);
        }
        let mut temp = self.temp.lock().unwrap_or_else(PoisonError::into_inner);
        if temp.is_none() {
            let dir = tempfile::Builder::new()
                .prefix("skillkit-scripts-")
                .tempdir()
                .map_err(cannot)?;
            *temp = Some(dir);
        }
        let dir: &Path = temp.as_ref().map_or(Path::new("."), |d| d.path());
        std::fs::canonicalize(dir).map_err(cannot)
    }
}
