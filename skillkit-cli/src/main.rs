//! `skillkit`: validate, list, show and render Agent Skills, import them from
//! GitHub, and run or chat with an agent over them.
//!
//! ```text
//! skillkit validate PATH... [--json]         exit 0 all valid, 1 any invalid, 2 usage or I/O error
//! skillkit list [PATH...] [--each] [--json]  kits, skills, agents and diagnostics
//! skillkit list --github [--json]            the sources imported from GitHub, at their commits
//! skillkit search QUERY [PATH...] [--json] [--limit N]  the skills that match, best first
//! skillkit show NAME [PATH...]               one skill: fields, location, files beside it, body
//! skillkit to-prompt PATH... [--each]        the <available_skills> block for a system prompt
//! skillkit import owner/repo[/path][@ref]    download a skill repository into the cache
//! skillkit forget SOURCE                     forget an imported source
//! skillkit add SOURCE [--to DIR]             install a source's skills into the project, pinned
//! skillkit install [--locked|--offline|--frozen]  the project's skills exactly as its lock says
//! skillkit update [SOURCE]                   move pinned skills to their ref's new commit
//! skillkit remove NAME                       take a pinned skill out of the project
//! skillkit verify [--json]                   the project's skills against its lock
//! skillkit sign DIR --key FILE               sign a skill (SKILL.sig, sshsig)
//! skillkit eval KIT_DIR [--skill NAME]       does a skill trigger, and does it help? (evals)
//! skillkit refresh [SOURCE]                  update imported sources to their ref's commit
//! skillkit run AGENT_DIR "task" [--json]     one task: the answer on stdout
//! skillkit chat AGENT_DIR [--resume FILE]    an interactive conversation
//! skillkit serve [PATH...] [--http ADDR]    the skills over MCP (stdio or HTTP), for MCP clients
//! skillkit trust [PATH|SOURCE] [--list] [--revoke]  kits whose allowed-tools an agent grants
//! skillkit completions SHELL                 shell completions (bash, zsh, fish, powershell)
//! ```
#![forbid(unsafe_code)]

mod agent;
mod approval;
mod args;
mod ask;
mod chat;
mod commands;
mod eval;
mod exit;
mod explain;
mod failure;
mod github;
mod list;
mod mcp_args;
mod output;
mod progress;
mod project;
mod run;
mod search;
mod serve;
mod sessions;
mod show;
mod sources;
mod telemetry;
mod trust;
mod validate;
mod verify;
mod view;

use std::process::ExitCode;

use args::{Cli, Command};
use clap::{CommandFactory, Parser};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Kept to the end: dropping it sends the spans and metrics left.
    let _export = telemetry::start();
    let global = cli.global;
    let result = match cli.command {
        Command::Validate { paths, json } => return validate::run(&paths, json),
        Command::Eval(args) => return eval::run(&args),
        Command::Verify {
            project,
            lock,
            json,
            allowed_signers,
        } => {
            return verify::run(
                project.as_deref(),
                lock.as_deref(),
                allowed_signers.as_deref(),
                json,
            );
        }
        Command::Install {
            mcp,
            locked,
            offline,
            frozen,
            project,
        } => {
            let mode = skillkit::lockfile::InstallMode {
                locked: locked || frozen,
                offline: offline || frozen,
            };
            return project::install(&global, project.as_deref(), &mcp, mode);
        }
        Command::List {
            github: true, json, ..
        } => github::list(&global, json),
        Command::List {
            paths,
            each,
            json,
            mcp,
            ..
        } => list::run(&global, &paths, &mcp, each, json),
        Command::ToPrompt { paths, each } => list::to_prompt(&paths, each),
        Command::Search {
            query,
            paths,
            each,
            json,
            limit,
        } => search::run(&global, &query, &paths, each, json, limit),
        Command::Show { name, paths } => show::run(&global, &name, &paths),
        Command::Import { source } => github::import(&global, &source),
        Command::Forget { source } => github::forget(&global, &source),
        Command::Add {
            source,
            mcp,
            plugin,
            to,
            project,
        } => project::add(
            &global,
            project.as_deref(),
            source.as_deref(),
            &mcp,
            plugin.as_deref(),
            to.as_deref(),
        ),
        Command::Update {
            source,
            allow_ref_change,
            allow_signer_change,
            project,
        } => project::update(
            &global,
            project.as_deref(),
            source.as_deref(),
            skillkit::lockfile::UpdateMode {
                allow_ref_change,
                allow_signer_change,
            },
        ),
        Command::Remove { name, project } => project::remove(&global, project.as_deref(), &name),
        Command::Sign {
            dir,
            key,
            print_message,
        } => project::run_sign(&dir, key.as_deref(), print_message),
        Command::Refresh { source } => github::refresh(&global, source.as_deref()),
        Command::Run {
            agent,
            task,
            skill,
            json,
        } => run::run(&global, &agent, &task, skill.as_deref(), json),
        Command::Chat { agent, resume } => chat::run(&global, &agent, resume),
        Command::Sessions { action, sessions } => sessions::run(sessions.as_deref(), action),
        Command::Serve {
            paths,
            each,
            github,
            serve,
        } => serve::run(&global, &paths, each, &github, &serve),
        Command::Trust {
            place,
            list,
            revoke,
        } => trust::run(&global, place.as_deref(), list, revoke),
        Command::Completions { shell } => {
            completions(shell);
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// `skillkit completions SHELL`: the script, generated from the arguments
/// of [`Cli`], so it always matches them.
fn completions(shell: clap_complete::Shell) {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "skillkit", &mut script);
    output::out_text!("{}", String::from_utf8_lossy(&script));
}
