//! `skillkit`: validate, list and render Agent Skills from the command line.
//!
//! ```text
//! skillkit validate PATH... [--json]       exit 0 all valid, 1 any invalid, 2 usage or I/O error
//! skillkit list [PATH...] [--each] [--json]  kits, skills, agents and diagnostics
//! skillkit to-prompt PATH... [--each]      the <available_skills> block for a system prompt
//! ```

mod list;
mod output;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Validate, list and render Agent Skills (SKILL.md).
#[derive(Debug, Parser)]
#[command(name = "skillkit", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check skills against the Agent Skills rules (same verdict as skills-ref).
    ///
    /// PATH is a skill directory, a SKILL.md, or any directory searched
    /// recursively for SKILL.md files.
    Validate {
        /// Skill directories, SKILL.md files or directories to search.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print one JSON object: skill directory -> list of problems.
        #[arg(long)]
        json: bool,
    },
    /// Load each PATH as a kit and print its kits, skills, agents and diagnostics.
    ///
    /// Without PATH: the standard locations, as agents look for them: this
    /// folder's `.agents/skills/` and `.claude/skills/`, then `~/.agents/skills/`
    /// and `~/.claude/skills/` (a project skill shadows a user skill of the same
    /// name).
    List {
        /// Kit directories (none: the standard locations).
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the <available_skills> block (name, description, location) for an
    /// agent's system prompt.
    ToPrompt {
        /// Kit or skill directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
    },
}

/// Exit code: usage or I/O error.
pub const EXIT_IO: u8 = 2;

fn main() -> ExitCode {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { paths, json } => validate::run(&paths, json),
        Command::List { paths, each, json } => list::run(&paths, each, json),
        Command::ToPrompt { paths, each } => list::to_prompt(&paths, each),
    }
}
