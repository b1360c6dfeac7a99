/// MCP servers named on the command line.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct McpArgs {
    /// An MCP server to start and speak to on stdio: a command line, quoted (repeatable).
    #[arg(long = "mcp", value_name = "COMMAND ARGS")]
    pub commands: Vec<String>,
    /// An MCP server speaking Streamable HTTP (repeatable); a bearer token is read from SKILLKIT_MCP_TOKEN when set.
    #[arg(long = "mcp-url", value_name = "URL")]
    pub urls: Vec<String>,
}
