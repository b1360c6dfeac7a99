//! [`Endpoint`]: where an MCP server is, and connecting to it.

use std::fmt;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use rmcp::ClientHandler;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

/// Where an MCP server is: a program started with its arguments, spoken to
/// over its stdin and stdout, or a Streamable HTTP URL, with a bearer token
/// read from an environment variable when it needs one.
///
/// ```
/// use skillkit::mcp_client::Endpoint;
///
/// let server = Endpoint::parse_command("npx -y '@modelcontextprotocol/server-everything'").unwrap();
/// assert_eq!(server, Endpoint::command("npx", ["-y", "@modelcontextprotocol/server-everything"]));
///
/// let remote = Endpoint::url("http://127.0.0.1:8080/mcp").bearer_token_env("MCP_TOKEN");
/// assert_eq!(remote.to_string(), "http://127.0.0.1:8080/mcp");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// A program started for the connection, speaking MCP on stdio. What it
    /// writes to standard error is logged (`info`, target
    /// `skillkit::mcp_client::stderr`, control characters escaped), never
    /// passed to this process's standard error.
    Command {
        /// The program (looked up in `PATH` when it has no `/`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A server speaking Streamable HTTP at this URL.
    Url {
        /// The endpoint, for example `http://127.0.0.1:8080/mcp`.
        url: String,
        /// The environment variable holding a bearer token to send, if any;
        /// read at each connection, never stored.
        bearer_env: Option<String>,
    },
}

/// Why [`Endpoint::connect`] (or [`Endpoint::parse_command`]) failed.
///
/// ```
/// let error = skillkit::mcp_client::Endpoint::parse_command("'unclosed").unwrap_err();
/// assert!(error.to_string().contains("quote"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// A command line that is empty or does not split into words.
    #[error(
        "`{0}` is not a command line: give a program and its arguments, quoting as a shell does (an unclosed quote?)"
    )]
    CommandLine(String),
    /// The program could not be started.
    #[error("starting `{program}` failed: {source}; check that it is installed and on PATH")]
    Spawn {
        /// The program.
        program: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The environment variable meant to hold the bearer token is unset or
    /// not Unicode.
    #[error("the MCP server's token is read from ${0}, which is not set: export it")]
    MissingToken(String),
    /// The MCP handshake failed (the server is not up, not an MCP server,
    /// refused the token, or speaks no revision this client knows).
    #[error("connecting to the MCP server {endpoint} failed: {message}")]
    Handshake {
        /// The endpoint, as displayed.
        endpoint: String,
        /// What went wrong.
        message: String,
    },
}

impl Endpoint {
    /// A program and its arguments, started for each connection.
    ///
    /// ```
    /// let server = skillkit::mcp_client::Endpoint::command("python3", ["server.py"]);
    /// assert_eq!(server.to_string(), "python3 server.py");
    /// ```
    pub fn command(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Endpoint::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// A command line split into words as a POSIX shell does (quotes and
    /// backslashes; no variables, globs or pipes), as `--mcp 'COMMAND ARGS'`
    /// takes it.
    ///
    /// ```
    /// use skillkit::mcp_client::Endpoint;
    /// let server = Endpoint::parse_command(r#"node "my server.js" --flag"#).unwrap();
    /// assert_eq!(server, Endpoint::command("node", ["my server.js", "--flag"]));
    /// assert!(Endpoint::parse_command("   ").is_err());
    /// ```
    pub fn parse_command(line: &str) -> Result<Self, ConnectError> {
        let words = shlex::split(line).ok_or_else(|| ConnectError::CommandLine(line.to_owned()))?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| ConnectError::CommandLine(line.to_owned()))?;
        Ok(Endpoint::Command {
            program,
            args: words.collect(),
        })
    }

    /// A Streamable HTTP endpoint.
    ///
    /// ```
    /// let remote = skillkit::mcp_client::Endpoint::url("http://127.0.0.1:8080/mcp");
    /// assert_eq!(remote.to_string(), "http://127.0.0.1:8080/mcp");
    /// ```
    pub fn url(url: impl Into<String>) -> Self {
        Endpoint::Url {
            url: url.into(),
            bearer_env: None,
        }
    }

    /// Sends the token held by the environment variable `var` as a bearer
    /// token (HTTP endpoints; a command is left as it is).
    ///
    /// ```
    /// use skillkit::mcp_client::Endpoint;
    /// let remote = Endpoint::url("http://127.0.0.1:8080/mcp").bearer_token_env("MCP_TOKEN");
    /// assert!(matches!(remote, Endpoint::Url { bearer_env: Some(ref v), .. } if v == "MCP_TOKEN"));
    /// ```
    pub fn bearer_token_env(self, var: impl Into<String>) -> Self {
        match self {
            Endpoint::Url { url, .. } => Endpoint::Url {
                url,
                bearer_env: Some(var.into()),
            },
            command => command,
        }
    }

    /// Connects, runs the MCP handshake, and serves `handler` (which receives
    /// the server's notifications and requests) for the connection's life.
    /// A started program is killed when the connection is dropped.
    ///
    /// ```no_run
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::mcp_client::Endpoint;
    /// let server = Endpoint::command("npx", ["-y", "@modelcontextprotocol/server-everything"]);
    /// let client = server.connect(()).await.unwrap();
    /// let tools = client.list_all_tools().await.unwrap();
    /// # });
    /// ```
    pub async fn connect<H: ClientHandler>(
        &self,
        handler: H,
    ) -> Result<RunningService<RoleClient, H>, ConnectError> {
        self.connect_with(handler, ClientLifecycleMode::Initialize)
            .await
    }

    /// Connects with the newest revision the server offers: revision
    /// 2026-07-28 through `server/discover` where the server speaks it (its
    /// notifications then come only on a `subscriptions/listen` stream the
    /// client opens), else the `initialize` handshake. A server that fails
    /// the probe in any way is connected to again, afresh, by the handshake.
    pub(crate) async fn connect_newest<H: ClientHandler + Clone>(
        &self,
        handler: H,
    ) -> Result<RunningService<RoleClient, H>, ConnectError> {
        let newest = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        };
        match self.connect_with(handler.clone(), newest).await {
            Ok(connected) => Ok(connected),
            Err(error @ (ConnectError::Spawn { .. } | ConnectError::MissingToken(_))) => Err(error),
            Err(error) => {
                tracing::debug!(server = %self, %error, "server/discover failed; connecting by the initialize handshake");
                self.connect(handler).await
            }
        }
    }

    async fn connect_with<H: ClientHandler>(
        &self,
        handler: H,
        lifecycle: ClientLifecycleMode,
    ) -> Result<RunningService<RoleClient, H>, ConnectError> {
        let handshake = |error: &dyn fmt::Display| ConnectError::Handshake {
            endpoint: self.to_string(),
            message: error.to_string(),
        };
        match self {
            Endpoint::Command { program, args } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).kill_on_drop(true);
                let (transport, stderr) = TokioChildProcess::builder(command)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| ConnectError::Spawn {
                        program: program.clone(),
                        source,
                    })?;
                if let Some(stderr) = stderr {
                    tokio::spawn(log_stderr(self.to_string(), stderr));
                }
                handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| handshake(&e))
            }
            Endpoint::Url { url, bearer_env } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_env {
                    let token =
                        std::env::var(var).map_err(|_| ConnectError::MissingToken(var.clone()))?;
                    config = config.auth_header(token);
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| handshake(&e))
            }
        }
    }
}

/// The longest line of a server's standard error kept whole in the log; the
/// rest of a longer line is dropped.
const STDERR_LINE: usize = 4096;

/// Drains a started server's standard error until it closes, as `info`
/// events of the target `skillkit::mcp_client::stderr`, one per line, so
/// the server never blocks on a full pipe and nothing it writes reaches a
/// terminal unfiltered (tracing's formatter escapes control characters).
async fn log_stderr(server: String, stderr: impl AsyncRead + Unpin) {
    let mut lines = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line[..line.len().min(STDERR_LINE)]);
                let text = text.trim_end();
                if !text.is_empty() {
                    tracing::info!(target: "skillkit::mcp_client::stderr", server = %server, "{}", text.escape_debug());
                }
            }
        }
    }
}

impl fmt::Display for Endpoint {
    /// The command line (words joined by spaces) or the URL; never a token.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Command { program, args } => {
                f.write_str(program)?;
                args.iter().try_for_each(|arg| write!(f, " {arg}"))
            }
            Endpoint::Url { url, .. } => f.write_str(url),
        }
    }
}
