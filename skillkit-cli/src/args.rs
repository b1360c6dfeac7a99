//! The command line's grammar: the commands and their flags ([`Cli`]), the
//! options every command understands ([`Global`]) and those of the commands
//! that run an agent ([`AgentArgs`]); and parsers of the values flags take
//! that are more than their type: a count that must be 1 or more is refused
//! at 0 with a message saying what to give, not taken as 1 without a word.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{eval, mcp_args, search, serve, sessions};

/// Validate, list and render Agent Skills (SKILL.md), import them from
/// GitHub, and run or chat with an agent over them.
#[derive(Debug, Parser)]
#[command(
    name = "skillkit",
    version,
    about,
    after_help = "Exit codes: 0 success; 1 the work failed (an invalid skill for validate, an unknown \
                  skill, a model or GitHub error); 2 a usage or I/O error (a bad flag, no such \
                  directory, an unreadable file)."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command understands.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Global {
    /// Where imported GitHub repositories are kept (default: the user's cache
    /// folder, `skillkit/github` in it).
    #[arg(long, global = true, env = "SKILLKIT_CACHE_DIR", value_name = "DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// The GitHub API root, for GitHub Enterprise
    /// (`https://github.example.com/api/v3`).
    #[arg(long, global = true, env = "GITHUB_API_URL", value_name = "URL")]
    pub(crate) github_url: Option<String>,
    /// Rank skills by meaning too (`search`, the agent's `search_skills`,
    /// the MCP server's `list_skills {query}`): an OpenAI-compatible
    /// embeddings endpoint (`http://127.0.0.1:11434/v1` for Ollama,
    /// `https://api.openai.com/v1`). Vectors are kept in the cache folder,
    /// so a skill is embedded once per version.
    #[arg(long, global = true, env = "SKILLKIT_EMBED_URL", value_name = "URL")]
    pub(crate) embed: Option<String>,
    /// The embedding model to ask for (default: text-embedding-3-small).
    #[arg(long, global = true, env = "SKILLKIT_EMBED_MODEL", value_name = "NAME")]
    pub(crate) embed_model: Option<String>,
}

/// Options of the commands that run an agent.
#[derive(Debug, Clone, Args)]
pub(crate) struct AgentArgs {
    /// The agent's folder: its `AGENT.md` (name, description, model, and the
    /// system prompt as the body) and its skills. Without an `AGENT.md`, an
    /// agent over the folder's skills.
    pub(crate) agent_dir: PathBuf,
    /// More skills for the agent: a kit folder (repeatable).
    #[arg(long = "skills", value_name = "PATH")]
    pub(crate) skills: Vec<PathBuf>,
    /// The model, as any URI of the registry (`anthropic://claude-sonnet-4-6`,
    /// `openai://gpt-4o-mini`, `scripted://FILE` for a JSON script). Default:
    /// the AGENT.md's model, else Claude; offline (a scripted model that says
    /// so) when no API key is set.
    #[arg(long, env = "SKILLKIT_MODEL", value_name = "URI")]
    pub(crate) model: Option<String>,
    /// Let these tool calls run without asking (repeatable; `github:*`, `*`).
    /// Reading a skill and delegating to a sub-agent never ask; every other
    /// tool asks first.
    #[arg(long = "allow", value_name = "TOOL")]
    pub(crate) allow: Vec<String>,
    /// Offer the model `run_skill_script`: it runs a script inside a skill's
    /// folder (python3, bash, sh, node) in a temporary working folder, with a
    /// scrubbed environment, a 60 s timeout and, on Linux, the script sandbox
    /// (namespaces, Landlock, seccomp: writes only in that folder, no
    /// network, no view of other processes, nothing left running). Every
    /// call asks first unless `--allow run_skill_script`.
    #[arg(long)]
    pub(crate) allow_scripts: bool,
    /// With --allow-scripts: run scripts even where the kernel cannot put up
    /// every layer of the sandbox (the layers in force are printed).
    #[arg(long, requires = "allow_scripts")]
    pub(crate) allow_weaker_sandbox: bool,
    /// MCP servers: their tools are the agent's, as `NAME__TOOL` (NAME: the
    /// program's or the URL host's name), each call asked first unless
    /// `--allow NAME__*`; their skills are the agent's too (untrusted: their
    /// allowed-tools are asked like any tool).
    #[command(flatten)]
    pub(crate) mcp: mcp_args::McpArgs,
    /// Keep the conversation as session NAME in the sessions folder: it is
    /// read before the first message and each turn is written as it
    /// completes, so `--session NAME` later (or in another process) goes on
    /// with it. NAME: letters, digits, `-`, `_`, `.`.
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
    /// Where sessions are kept: a folder, or a `sqlite://FILE` or
    /// `postgres://…` URL (default: the user's data folder,
    /// `skillkit/sessions`).
    #[arg(long, env = "SKILLKIT_SESSIONS_URL", value_name = "DIR|URL")]
    pub(crate) sessions: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check skills against the Agent Skills rules (same verdict as skills-ref).
    ///
    /// PATH is a skill directory, a SKILL.md, or any directory searched
    /// recursively for SKILL.md files. Exit 0: all valid; 1: any invalid;
    /// 2: usage or I/O error (a PATH or a SKILL.md that cannot be read: a
    /// folder, a FIFO, a link to nothing; the skills that could be read are
    /// still reported). What the search skipped (a folder it cannot read, a
    /// skill deeper than 8 folders) is a warning on stderr.
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
    /// Without PATH: the standard locations, as agents look for them:
    /// `.agents/skills/` and `.claude/skills/` in this folder and each folder
    /// above it up to the repository root (the one holding `.git`), nearest
    /// first, then `~/.agents/skills/` and `~/.claude/skills/` (a nearer skill
    /// shadows a farther one of the same name), then the kits imported from
    /// GitHub; the folders searched are printed on stderr. Exit 0: listed; 2:
    /// a PATH (or another source: an MCP server, the GitHub cache) cannot
    /// be read; what could be read is still listed, and each failure is one
    /// line on stderr.
    List {
        /// Kit directories (none: the standard locations and imported kits).
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// List the sources imported from GitHub, with their commits.
        #[arg(long, conflicts_with_all = ["paths", "each"])]
        github: bool,
        /// MCP servers whose skills to list (with PATHs, as well; without,
        /// instead of the standard locations).
        #[command(flatten)]
        mcp: mcp_args::McpArgs,
    },
    /// Search the skills for QUERY (a few words about a task, or a skill's
    /// name) and print the best matches first: name, score, description.
    ///
    /// PATHs and discovery as `list` (without PATH: the standard locations
    /// and the imported kits). Exit 0: found; 1: nothing matches; 2: an empty
    /// query, or a PATH cannot be read.
    Search {
        /// What to look for.
        query: String,
        /// Kit directories (none: the standard locations and imported kits).
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
        /// Print a JSON array of hits, best first: name, description, score
        /// and path (the skill's folder).
        #[arg(long)]
        json: bool,
        /// The most hits to print (1 or more).
        #[arg(long, default_value_t = search::DEFAULT_LIMIT, value_parser = count)]
        limit: usize,
    },
    /// Show one skill: its fields, location, the files beside it, and its body.
    ///
    /// NAME is a full name (`kit:skill`) or a bare name found in one kit.
    /// Without PATH: the standard locations and the imported kits. Exit 0:
    /// shown; 1: no such skill (or the name is ambiguous); 2: a PATH cannot be
    /// read.
    Show {
        /// The skill's name.
        name: String,
        /// Kit directories to look in.
        paths: Vec<PathBuf>,
    },
    /// Print the <available_skills> block (name, description, location) for an
    /// agent's system prompt. Exit 0: printed; 2: a PATH cannot be read.
    ToPrompt {
        /// Kit or skill directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
    },
    /// Import a skill repository (or a folder of one) from GitHub into the
    /// cache; its skills are then served offline by list, show, run and chat.
    ///
    /// Uses GITHUB_TOKEN when set. Exit 0: imported (or already there);
    /// 1: GitHub refused or the repository holds no skills; 2: SOURCE is not
    /// a source, or the cache cannot be used.
    Import {
        /// `owner/repo[/path][@ref]`.
        source: String,
    },
    /// Forget a source imported into the cache (`import`'s opposite) and
    /// delete its files when no other source uses them. Needs no network;
    /// the project's pinned skills are not touched (that is `remove`).
    /// Exit 0: forgotten; 1: it was not imported; 2: SOURCE is not a
    /// source, or the cache cannot be used.
    Forget {
        /// The source as imported (`owner/repo[/path][@ref]`).
        source: String,
    },
    /// Install the skills of SOURCE into the project and pin them in its
    /// lockfile (`skillkit.lock.json`, beside them in the project's root):
    /// one folder per skill in `.agents/skills/` (`.claude/skills/` when the
    /// project has only that; --to otherwise), where Claude Code, Codex and
    /// SkillKit find them. The lock keeps the source, the ref, the commit,
    /// each file's digest and the signer of a signed skill (its SKILL.sig
    /// must hold for its files).
    ///
    /// SOURCE as `import` takes it: `owner/repo[/path][@ref]` (GitHub
    /// Enterprise with --github-url). Exit 0: added; 1: GitHub refused, the
    /// source holds no skill, a signature does not hold, or a folder is in
    /// the way; 2: SOURCE is not a source, or a file cannot be written.
    Add {
        /// `owner/repo[/path][@ref]` (with --plugin: the repository of a
        /// Claude Code marketplace, `.claude-plugin/marketplace.json`).
        #[arg(required_unless_present_any = ["commands", "urls"])]
        source: Option<String>,
        /// Or an MCP server's skills: each is read with its files (checked
        /// against the server's digests) and pinned as from `mcp+URL`, or
        /// `mcp+stdio:NAME` for a server started by a command (the lock
        /// never holds a command).
        #[command(flatten)]
        mcp: mcp_args::McpArgs,
        /// The plugin of the marketplace SOURCE whose skills to add: at the
        /// commit its entry pins by `sha`, or at the marketplace's commit for
        /// a plugin in the marketplace's own repository.
        #[arg(long, value_name = "NAME")]
        plugin: Option<String>,
        /// The folder to install into, relative to the project.
        #[arg(long, value_name = "DIR")]
        to: Option<String>,
        /// The project's folder (default: this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Make the project's skill folders exactly what its lockfile pins: each
    /// missing or changed skill is put back from its locked commit (the
    /// lock decides, not where a tag points now), every file checked
    /// against the lock's digests and the pinned signer. Nothing is half
    /// installed: on any failure the folders and the lock stay as they
    /// were. Without `skillkit.lock.json`, vercel's `skills-lock.json` is
    /// followed as it is (its computedHash checked, the file not rewritten).
    ///
    /// Exit 0: installed; 1: a skill could not be had or does not match
    /// the lock; 2: the lock cannot be read, or a file cannot be written;
    /// 3: --locked (or --frozen) and the lock would change (an entry
    /// written by hand, not yet pinned).
    Install {
        /// MCP servers the lock's `mcp+stdio:NAME` skills are fetched from
        /// again (install never starts a command the lock names); `mcp+URL`
        /// skills are fetched from their URL (without SKILLKIT_MCP_TOKEN
        /// unless --mcp-url gives that URL).
        #[command(flatten)]
        mcp: mcp_args::McpArgs,
        /// Fail (exit 3) rather than change the lockfile.
        #[arg(long)]
        locked: bool,
        /// No network: the commits must be in the cache.
        #[arg(long)]
        offline: bool,
        /// --locked and --offline.
        #[arg(long)]
        frozen: bool,
        /// The project's folder (default: this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Move the project's pinned skills (those of SOURCE, or all) to the
    /// commit their ref points at now, re-checked and re-pinned. SOURCE
    /// with another ref than the locked one needs --allow-ref-change; a
    /// skill now signed by another key (or no longer signed) needs
    /// --allow-signer-change.
    ///
    /// Exit 0: updated (or up to date); 1: refused, or GitHub failed (the
    /// folders and the lock are unchanged); 2: the lock cannot be read.
    Update {
        /// `owner/repo[/path][@ref]` as added.
        source: Option<String>,
        /// Accept a ref other than the locked one.
        #[arg(long)]
        allow_ref_change: bool,
        /// Accept a signer other than the pinned one.
        #[arg(long)]
        allow_signer_change: bool,
        /// The project's folder (default: this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Take a pinned skill out of the project: its folder and its entry in
    /// the lockfile (`add`'s opposite; the cache keeps its files, `forget`
    /// is for imported sources).
    ///
    /// Exit 0: removed; 1: the lock pins no such skill; 2: the lock cannot
    /// be read or written.
    Remove {
        /// The skill's name, as `verify` lists it.
        name: String,
        /// The project's folder (default: this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Sign the skill in DIR with an SSH key: writes DIR/SKILL.sig (the
    /// `sshsig` format of `ssh-keygen -Y sign`, namespace `skillkit-skill`)
    /// over the digest of its other files. With --print-message, print the
    /// message instead, to sign it with `ssh-keygen -Y sign -n
    /// skillkit-skill` (an encrypted key, ssh-agent, a security key).
    ///
    /// Exit 0: signed; 1: the folder cannot be signed; 2: the key cannot be
    /// read.
    Sign {
        /// The skill's folder.
        dir: PathBuf,
        /// An unencrypted OpenSSH private key (Ed25519 or ECDSA P-256).
        #[arg(long, value_name = "FILE", required_unless_present = "print_message")]
        key: Option<PathBuf>,
        /// Print the message to sign instead.
        #[arg(long)]
        print_message: bool,
    },
    /// Update imported sources to the commit their ref points at now.
    ///
    /// Without SOURCE: every imported source. Exit 0: all up to date;
    /// 1: a source failed (the others are still refreshed); 2: SOURCE is not
    /// a source, or the cache cannot be used.
    Refresh {
        /// One imported source.
        source: Option<String>,
    },
    /// Run an agent on one task: the answer on stdout, tool calls on stderr.
    ///
    /// Tool calls that ask for approval are asked on the terminal, or denied
    /// when there is none (allow them with --allow). Exit 0: answered; 1: the
    /// model failed, or no such skill or model; 2: AGENT_DIR cannot be read.
    Run {
        #[command(flatten)]
        agent: AgentArgs,
        /// The task (with --skill: the skill's arguments).
        #[arg(required_unless_present = "skill", default_value = "")]
        task: String,
        /// Run this skill yourself, as chat's /SKILL ARGS does: its body,
        /// rendered with TASK as its arguments, is the message (also a skill
        /// only people run, `disable-model-invocation: true`; not one marked
        /// `user-invocable: false`).
        #[arg(long, value_name = "SKILL")]
        skill: Option<String>,
        /// Print the agent's events as JSON lines on stdout instead.
        #[arg(long)]
        json: bool,
    },
    /// Chat with an agent: streamed answers, tool calls on one line each,
    /// approvals answered y/n.
    ///
    /// Ctrl-C stops the current answer and keeps the conversation; Ctrl-C
    /// twice at the prompt (or Ctrl-D, or `/quit`) exits. `/skills` lists the
    /// skills; `/<skill> ARGS` activates one yourself. The conversation is saved
    /// after each turn. Exit 0: the chat ended; 1: the model cannot be used;
    /// 2: AGENT_DIR or the session file cannot be read or written.
    Chat {
        #[command(flatten)]
        agent: AgentArgs,
        /// The session file: the conversation in it is continued, and each
        /// turn is saved to it (default: a new file in the user's data
        /// folder, `skillkit/sessions`). See also --session.
        #[arg(long, value_name = "FILE", conflicts_with = "session")]
        resume: Option<PathBuf>,
    },
    /// Check the project's skills against its lockfile (`skillkit.lock.json`):
    /// each pinned skill `ok`, `modified` (with the files changed, added,
    /// removed), `missing`, `outside` (the lock's path for it leaves the
    /// project), or `bad-signature` (its files are the pinned
    /// ones but its SKILL.sig does not hold for them or is not the pinned
    /// signer's); each skill in `.agents/skills/` or `.claude/skills/` the
    /// lock does not know, `unlocked`. An unsigned skill is ok unless the
    /// lock pins a signer for it. Offline.
    ///
    /// Exit 0: every skill ok; 1: one is not; 2: the lock cannot be read.
    Verify {
        /// The project's folder (default: this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The lockfile (default: PROJECT/skillkit.lock.json).
        #[arg(long, value_name = "FILE")]
        lock: Option<PathBuf>,
        /// Print one JSON object: each skill's name and status.
        #[arg(long)]
        json: bool,
        /// An allowed-signers file (`ssh-keygen`'s format): a signed skill
        /// whose lock pins no signer must be signed by one of its keys.
        #[arg(long, value_name = "FILE")]
        allowed_signers: Option<PathBuf>,
    },
    /// Evaluate a kit's skills: trigger evals (`evals/triggers.json`: each
    /// query run --runs times as a fresh conversation over the kit; a
    /// trigger is the agent's own activation of the skill) and task evals
    /// (`evals/evals.json`: each case run with the skill and without it in
    /// a fresh working folder, graded by its assertions), written in
    /// skill-creator's workspace layout.
    ///
    /// Exit 0: evaluated, every threshold holds; 1: a threshold does not
    /// hold (or no skill has evals); 2: a usage or I/O error (an eval file
    /// that cannot be read or is not in the format).
    Eval(eval::EvalArgs),
    /// The sessions kept by `run --session` and `chat --session`: list them,
    /// show one, fork one, remove one.
    ///
    /// Exit 0: done; 1: no such session; 2: usage or I/O error (a session that
    /// cannot be read, the others listed).
    Sessions {
        /// What to do (default: list).
        #[command(subcommand)]
        action: Option<sessions::Action>,
        /// Where sessions are kept: a folder, or a `sqlite://FILE` or
        /// `postgres://…` URL (default: the user's data folder,
        /// `skillkit/sessions`).
        #[arg(
            long,
            global = true,
            env = "SKILLKIT_SESSIONS_URL",
            value_name = "DIR|URL"
        )]
        sessions: Option<String>,
    },
    /// Serve the skills over the Model Context Protocol on stdin/stdout (or
    /// Streamable HTTP with --http), for Claude Code, Cursor or any MCP client.
    ///
    /// Tools `list_skills`, `activate_skill` and `read_skill_file`, one prompt
    /// per skill, and each skill's files as `skill://` resources, read afresh
    /// on every request; clients are sent list_changed notifications when the
    /// skills change. Without PATH: the standard locations and the imported
    /// kits, as `list` shows them. Configure it in a client as the command
    /// `skillkit serve PATH...`, or as the URL printed with --http. With
    /// --http, the bearer token clients must send is read from the environment
    /// variable SKILLKIT_MCP_TOKEN (never printed). Exit 0: the client
    /// disconnected; 1: a --github source cannot be imported, or the client
    /// broke the protocol; 2: a PATH cannot be read, or ADDR cannot be bound.
    Serve {
        /// Kit directories (none: the standard locations and imported kits).
        paths: Vec<PathBuf>,
        /// Load every child directory of each PATH as a kit.
        #[arg(long)]
        each: bool,
        /// Also serve this GitHub source (`owner/repo[/path][@ref]`),
        /// imported into the cache first when it is not there (repeatable).
        #[arg(long = "github", value_name = "SOURCE")]
        github: Vec<String>,
        #[command(flatten)]
        serve: serve::ServeArgs,
    },
    /// Trust a kit folder (or an imported SOURCE): an agent then grants its
    /// skills' `allowed-tools` (calls to those tools are not asked about
    /// once the skill is active), until a file in it changes.
    ///
    /// Naming a kit on the command line (AGENT_DIR, --skills) loads it but
    /// does not trust it: `run` and `chat` ask on a terminal the first time
    /// (not trusted without one), or trust it here. Exit 0: done;
    /// 1: --revoke of a folder that was not trusted; 2: PLACE is neither a
    /// folder nor an imported source, or the store cannot be written.
    Trust {
        /// A kit folder (default: the working directory) or an imported
        /// source (`owner/repo[/path][@ref]`).
        place: Option<String>,
        /// List the trusted folders and whether they changed since.
        #[arg(long, conflicts_with_all = ["place", "revoke"])]
        list: bool,
        /// Forget PLACE instead.
        #[arg(long)]
        revoke: bool,
    },
    /// Print a completion script for SHELL on stdout.
    ///
    /// bash: `skillkit completions bash > ~/.local/share/bash-completion/completions/skillkit`;
    /// zsh: `skillkit completions zsh > ~/.zfunc/_skillkit` (with `~/.zfunc` in
    /// `fpath`); fish: `skillkit completions fish >
    /// ~/.config/fish/completions/skillkit.fish`; PowerShell: `skillkit
    /// completions powershell >> $PROFILE`. Exit 0: printed.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// A count of 1 or more (`search --limit`, `eval --runs`, `eval --jobs`).
/// clap prints the message after the flag and the value given:
/// `error: invalid value '0' for '--limit <LIMIT>': give a whole number, 1
/// or more`.
pub(crate) fn count(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) | Err(_) => Err("give a whole number, 1 or more".to_owned()),
        Ok(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_a_whole_number_from_one_up() {
        assert_eq!(count("1"), Ok(1));
        assert_eq!(count("25"), Ok(25));
        for bad in ["0", "-1", "1.5", "", "ten", "99999999999999999999999"] {
            assert!(count(bad).is_err(), "{bad:?}");
        }
    }
}
