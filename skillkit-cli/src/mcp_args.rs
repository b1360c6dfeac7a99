//! `--mcp 'COMMAND ARGS'` and `--mcp-url URL`: the MCP servers named on the
//! command line, one definition for every command that takes them.

use std::collections::HashSet;

use skillkit::mcp_client::Endpoint;

use crate::failure::Failure;

/// The environment variable holding the bearer token sent to `--mcp-url`
/// servers, when it is set.
pub const TOKEN_VAR: &str = "SKILLKIT_MCP_TOKEN";

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

impl McpArgs {
    /// Each server with the name its tools are prefixed with
    /// (`NAME__TOOL`): the program's (or its last argument's) file name
    /// without extension or npm scope, for a command; the host, for a URL;
    /// `-2`, `-3`… added when two servers would share one.
    pub fn servers(&self) -> Result<Vec<(String, Endpoint)>, Failure> {
        let mut servers = Vec::new();
        let mut taken = HashSet::new();
        for line in &self.commands {
            let endpoint =
                Endpoint::parse_command(line).map_err(|e| Failure::io(format!("--mcp: {e}")))?;
            let Endpoint::Command { program, args } = &endpoint else {
                unreachable!("parse_command gives a command")
            };
            let word = args
                .iter()
                .rev()
                .find(|a| !a.starts_with('-'))
                .unwrap_or(program);
            servers.push((unique(&mut taken, stem(word)), endpoint));
        }
        for url in &self.urls {
            let host = url
                .split_once("://")
                .map_or(url.as_str(), |(_, rest)| rest)
                .split(['/', ':', '?', '#'])
                .next()
                .unwrap_or_default();
            if !url.starts_with("http://") && !url.starts_with("https://") {
                return Err(Failure::io(format!(
                    "--mcp-url: `{url}` is not an http:// or https:// URL"
                )));
            }
            let mut endpoint = Endpoint::url(url.clone());
            if std::env::var_os(TOKEN_VAR).is_some() {
                endpoint = endpoint.bearer_token_env(TOKEN_VAR);
            }
            servers.push((unique(&mut taken, name(host)), endpoint));
        }
        Ok(servers)
    }
}

/// The file name of `word` without its extension and npm scope, as a name.
fn stem(word: &str) -> String {
    let file = word.rsplit('/').next().unwrap_or(word);
    let file = file.split('@').find(|s| !s.is_empty()).unwrap_or(file);
    let file = match file.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => file,
    };
    name(file)
}

/// `text` with what a prefix may not hold replaced by `-`, at most 28 bytes.
fn name(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
            true => c,
            false => '-',
        })
        .collect();
    name.truncate(28);
    match name.trim_matches('-').is_empty() {
        true => "mcp".to_owned(),
        false => name,
    }
}

fn unique(taken: &mut HashSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 1;
    while !taken.insert(candidate.clone()) {
        n += 1;
        candidate = format!("{name}-{n}");
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(commands: &[&str], urls: &[&str]) -> Vec<String> {
        let args = McpArgs {
            commands: commands.iter().map(|s| s.to_string()).collect(),
            urls: urls.iter().map(|s| s.to_string()).collect(),
        };
        args.servers()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    #[test]
    fn servers_are_named_after_their_program_or_host() {
        assert_eq!(
            names(
                &[
                    "npx -y @modelcontextprotocol/server-everything",
                    "python3 tools.py --fast",
                    "./bin/mcp-server-everything"
                ],
                &["http://127.0.0.1:8080/mcp", "https://tools.example.com/mcp"],
            ),
            [
                "server-everything",
                "tools",
                "mcp-server-everything",
                "127-0-0-1",
                "tools-example-com"
            ]
        );
        assert_eq!(names(&["node a.js", "node a.js"], &[]), ["a", "a-2"]);
        assert_eq!(names(&["'日本'"], &[]), ["mcp"]);
    }

    #[test]
    fn bad_lines_and_urls_are_usage_errors() {
        let args = McpArgs {
            commands: vec!["'unclosed".into()],
            urls: vec![],
        };
        assert!(args.servers().is_err());
        let args = McpArgs {
            commands: vec![],
            urls: vec!["ftp://x".into()],
        };
        assert!(args.servers().is_err());
    }
}
