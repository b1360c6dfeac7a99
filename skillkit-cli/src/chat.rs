//! `skillkit chat AGENT_DIR`: a conversation in the terminal.
//!
//! The prompt is a rustyline editor (line editing, history). While an answer
//! streams, the terminal is in its normal mode, so Ctrl-C is a SIGINT: it is
//! caught and stops that answer ([`AgentController::stop`]), and the
//! conversation goes on. At the prompt, Ctrl-C is a key: twice in a row it
//! ends the chat. After every turn the conversation is written to the
//! session file (atomically), which `--resume FILE` continues; when that
//! fails, a warning says so and the conversation goes on.
//!
//! [`AgentController::stop`]: skillkit::agent::AgentController::stop

use std::path::{Path, PathBuf};

use futures::FutureExt;
use rustyline::error::ReadlineError;
use rustyline::history::{DefaultHistory, History as _};
use rustyline::{Config, Editor};
use skillkit::agent::session::SessionStore;
use skillkit::agent::{Agent, ContextUse, EventKind, History};
use skillkit::llm::Message;
use tokio::runtime::Runtime;

use crate::agent::{self, Started, decision, shorten};
use crate::args::{AgentArgs, Global};
use crate::commands::Commands;
use crate::failure::Failure;
use crate::list::one_line;
use crate::output::out;
use crate::show;
use crate::sources;
use crate::view::{Lines, View};

/// `skillkit chat`.
pub fn run(global: &Global, args: &AgentArgs, resume: Option<PathBuf>) -> Result<(), Failure> {
    let runtime = sources::runtime()?;
    let resume = resume.map(through_links).transpose()?;
    let history = match &resume {
        Some(file) => load(file)?,
        None => None,
    };
    let started = runtime.block_on(agent::start(global, args, history.clone()))?;
    // With --session the agent keeps the conversation itself.
    let file = match (resume, &args.session) {
        (_, Some(_)) => None,
        (Some(file), None) => Some(file),
        (None, None) => Some(session_file(started.agent.session_id())?),
    };
    // Before any line editor: SIGINT is this handler's whenever no line is
    // read (see `Prompt`).
    let mut interrupts = runtime.block_on(async { Interrupts::new() })?;
    let mut prompt = Prompt::new()?;
    out!(
        "agent {}: {}",
        started.definition.name,
        one_line(&started.definition.description)
    );
    out!("model {}", started.model);
    if let Some(sandbox) = &started.scripts {
        out!("scripts enabled (run_skill_script); sandbox: {sandbox}");
    }
    match (&file, &args.session) {
        (Some(file), _) => out!("session {}", file.display()),
        (None, Some(name)) => out!(
            "session {name} ({})",
            crate::sessions::place(args.sessions.as_deref())?
        ),
        (None, None) => {}
    }
    out!("{COMMANDS}");
    if let Some(history) = &history {
        replay(history);
    }
    // A session's earlier turns (the agent reads them itself).
    if let Some(name) = &args.session {
        let store = crate::sessions::store(args.sessions.as_deref(), name)?;
        let loaded = runtime.block_on(store.load(name, None));
        if let Ok(loaded) = loaded
            && !loaded.items.is_empty()
        {
            replay(&History {
                session_id: name.clone(),
                messages: loaded.items.into_iter().map(|item| item.message).collect(),
            });
        }
    }
    let mut chat = Chat {
        runtime: &runtime,
        started,
        view: View::new(Lines::Stdout),
        file,
        context: None,
    };
    let mut interrupted = false;
    loop {
        let commands = chat.commands();
        let line = match prompt.read_with("> ", commands) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) if !interrupted => {
                interrupted = true;
                out!("(Ctrl-C again or /quit to leave)");
                continue;
            }
            // A second Ctrl-C, Ctrl-D, or the terminal went away.
            Err(_) => return Ok(()),
        };
        interrupted = false;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        prompt.remember(line);
        let message = match line {
            "/quit" | "/exit" => return Ok(()),
            "/help" | "/?" => {
                out!(
                    "{COMMANDS}\n(a skill named like a command is used by its full name: /<kit>:<skill>)"
                );
                continue;
            }
            "/skills" => {
                chat.list_skills();
                continue;
            }
            "/context" => {
                chat.context();
                continue;
            }
            _ if line == "/compact" || line.starts_with("/compact ") => {
                let instructions = line["/compact".len()..].trim();
                chat.compact(
                    (!instructions.is_empty()).then_some(instructions),
                    &mut interrupts,
                )?;
                continue;
            }
            _ => match line.strip_prefix('/') {
                Some(command) => match chat.activation(command) {
                    Some(message) => message,
                    None => continue,
                },
                None => line.to_owned(),
            },
        };
        chat.turn(&message, &mut prompt, &mut interrupts)?;
    }
}

/// What a person can type besides a message, shown at the start and by `/help`.
const COMMANDS: &str = "/skills lists the skills, /<skill> ARGS uses one, /help shows this, \
                        /compact [WHAT TO KEEP] summarises the conversation, /context shows how \
                        full the model's window is, /quit ends; Ctrl-C stops an answer";

/// One chat's state between prompts.
struct Chat<'r> {
    runtime: &'r Runtime,
    started: Started,
    view: View,
    /// The file the conversation is saved to after each turn (none with
    /// `--session`: the agent writes the session).
    file: Option<PathBuf>,
    /// How full the model's window was after the last request.
    context: Option<ContextUse>,
}

impl Chat<'_> {
    fn agent(&mut self) -> &mut Agent {
        &mut self.started.agent
    }

    /// Sends `message` and shows the answer until it ends, answering
    /// approvals and stopping on Ctrl-C; then saves the conversation (or
    /// warns that it could not, and the conversation goes on).
    fn turn(
        &mut self,
        message: &str,
        prompt: &mut Prompt,
        interrupts: &mut Interrupts,
    ) -> Result<(), Failure> {
        interrupts.forget();
        self.agent()
            .send_message(message)
            .map_err(|e| Failure::failed(crate::explain::agent(&e)))?;
        loop {
            let runtime = self.runtime;
            let agent = &mut self.started.agent;
            let step = runtime.block_on(async {
                tokio::select! {
                    event = agent.next_event() => Step::Event(event),
                    () = interrupts.next() => Step::Interrupt,
                }
            });
            let event = match step {
                Step::Interrupt => {
                    self.agent().stop();
                    continue;
                }
                Step::Event(None) => return Err(Failure::failed("the agent shut down")),
                Step::Event(Some(event)) => event,
            };
            self.view.show(&event);
            if let EventKind::Context(used) = &event.kind
                && event.agent.is_root()
            {
                self.context = Some(*used);
            }
            if crate::output::reader_gone() {
                // The terminal went away: end the answer; the turn is saved.
                self.agent().stop();
            }
            match &event.kind {
                EventKind::InputRequested(request) => {
                    self.view.end_line();
                    let approval = crate::approval::approval(request);
                    if !approval.details.is_empty() {
                        crate::output::out_text!("{}", approval.details);
                    }
                    let answer = match prompt.read(&approval.question) {
                        Ok(answer) => Some(answer),
                        Err(ReadlineError::Interrupted) => {
                            self.agent().stop();
                            Some("n".into())
                        }
                        Err(_) => None,
                    };
                    let _ = self
                        .agent()
                        .respond(&request.call_id, decision(answer.as_deref()));
                }
                EventKind::Stopped => out!("(stopped; the conversation goes on)"),
                EventKind::Error(error) if event.agent.is_root() => {
                    out!("error: {}", crate::explain::agent(error));
                }
                _ => {}
            }
            if event.is_end_of_message() {
                break;
            }
        }
        if let Some(used) = self.context {
            out!("({})", context_line(&used));
        }
        self.save();
        Ok(())
    }

    /// Compacts the conversation now (`/compact`), keeping what
    /// `instructions` say; Ctrl-C stops it and leaves the conversation as
    /// it was.
    fn compact(
        &mut self,
        instructions: Option<&str>,
        interrupts: &mut Interrupts,
    ) -> Result<(), Failure> {
        interrupts.forget();
        self.agent()
            .controller()
            .request_compaction(instructions.map(str::to_owned))
            .map_err(|e| Failure::failed(crate::explain::agent(&e)))?;
        out!("(compacting: the model summarises the conversation…)");
        loop {
            let runtime = self.runtime;
            let agent = &mut self.started.agent;
            let step = runtime.block_on(async {
                tokio::select! {
                    event = agent.next_event() => Step::Event(event),
                    () = interrupts.next() => Step::Interrupt,
                }
            });
            let event = match step {
                Step::Interrupt => {
                    self.agent().stop();
                    continue;
                }
                Step::Event(None) => return Err(Failure::failed("the agent shut down")),
                Step::Event(Some(event)) => event,
            };
            self.view.show(&event);
            if !event.agent.is_root() {
                continue;
            }
            match &event.kind {
                EventKind::Compacted(compaction) => {
                    self.context = self.context.map(|used| ContextUse {
                        tokens: compaction.tokens_after,
                        ..used
                    });
                    break;
                }
                EventKind::Error(error) => {
                    out!("error: {}", crate::explain::agent(error));
                    break;
                }
                _ => {}
            }
        }
        self.save();
        Ok(())
    }

    /// Shows how full the model's window is (`/context`).
    fn context(&mut self) {
        match self.context {
            Some(used) => out!("{}", context_line(&used)),
            None => out!("no request sent yet: the model has not counted the context"),
        }
    }

    /// Saves the conversation to its file, if it has one (or warns that it
    /// could not, and the conversation goes on).
    fn save(&mut self) {
        if let Some(file) = &self.file
            && let Err(e) = save(file, &self.started.agent.history())
        {
            out!(
                "warning: cannot save the conversation to {}: {e}; it goes on, and is saved after the next answer",
                file.display()
            );
        }
    }

    /// What the person may type at the next prompt.
    fn commands(&mut self) -> Commands {
        let snapshot = self.runtime.block_on(self.started.catalog.snapshot());
        Commands::of(&snapshot)
    }

    /// `/skills`: the skills a person runs (`/name ARGUMENT-HINT`), then
    /// those the agent uses on its own (`user-invocable: false`).
    fn list_skills(&mut self) {
        let snapshot = self.runtime.block_on(self.started.catalog.snapshot());
        let (yours, agents): (Vec<_>, Vec<_>) =
            snapshot.skills().partition(|skill| skill.user_invocable());
        for skill in yours {
            let usage = match skill.argument_hint() {
                Some(hint) => format!("/{} {}", skill.name, one_line(&hint)),
                None => format!("/{}", skill.name),
            };
            let only = match skill.model_invocable() {
                true => "",
                false => " (yours only: the agent does not see it)",
            };
            out!("  {usage}: {}{only}", shorten(&skill.description, 90));
        }
        if !agents.is_empty() {
            out!("the agent uses these when a task needs them:");
            for skill in agents {
                out!("  {}: {}", skill.name, shorten(&skill.description, 90));
            }
        }
    }

    /// `/<skill> ARGS`: the skill's body rendered with ARGS, to send as the
    /// message; `None` (and why) when there is no such skill, or it is not a
    /// person's to run.
    fn activation(&mut self, command: &str) -> Option<String> {
        let (name, arguments) = command.split_once(' ').unwrap_or((command, ""));
        let snapshot = self.runtime.block_on(self.started.catalog.snapshot());
        let Ok(skill) = show::find(&snapshot, name) else {
            out!("no skill `{name}`; /skills lists them, /help shows the commands");
            return None;
        };
        let session = self.started.agent.session_id().to_owned();
        match show::invocation(self.runtime, &skill, arguments.trim(), &session) {
            Ok(text) => {
                out!("(using {})", skill.name);
                Some(text)
            }
            Err(failure) => {
                out!("{}", failure.message());
                None
            }
        }
    }
}

enum Step {
    Event(Option<skillkit::agent::AgentEvent>),
    Interrupt,
}

/// The prompt's line editor, one per line read, the history carried from
/// one to the next.
///
/// A rustyline editor catches SIGINT and SIGWINCH for as long as it lives
/// and notes each in a pipe it reads only when a later signal interrupts a
/// key read. An editor kept alive while an answer streams would note the
/// Ctrl-C that stops the answer (SIGINT handlers chain), and at the next
/// prompt a terminal resize would read that note as a second Ctrl-C. So no
/// editor lives while no line is read: SIGINT is then [`Interrupts`]' alone.
struct Prompt {
    history: DefaultHistory,
}

impl Prompt {
    /// Checks that the terminal can be used.
    fn new() -> Result<Prompt, Failure> {
        let mut editor = editor(DefaultHistory::new())
            .map_err(|e| Failure::io(format!("cannot use the terminal: {e}")))?;
        Ok(Prompt {
            history: std::mem::take(editor.history_mut()),
        })
    }

    /// One line typed after `prompt` (an answer: nothing to complete).
    fn read(&mut self, prompt: &str) -> Result<String, ReadlineError> {
        self.read_with(prompt, Commands::default())
    }

    /// One line typed after `prompt`, `commands` completed with Tab.
    fn read_with(&mut self, prompt: &str, commands: Commands) -> Result<String, ReadlineError> {
        let mut editor = editor(std::mem::take(&mut self.history))?;
        editor.set_helper(Some(commands));
        let line = editor.readline(prompt);
        self.history = std::mem::take(editor.history_mut());
        line
    }

    /// Adds `line` to the history.
    fn remember(&mut self, line: &str) {
        let _ = self.history.add(line);
    }
}

/// A line editor with `history`.
fn editor(history: DefaultHistory) -> rustyline::Result<Editor<Commands, DefaultHistory>> {
    Editor::with_history(Config::default(), history)
}

/// Ctrl-C while an answer streams.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    /// Catches SIGINT from now on (it no longer ends the process). Inside
    /// the runtime.
    fn new() -> Result<Interrupts, Failure> {
        #[cfg(unix)]
        {
            let kind = tokio::signal::unix::SignalKind::interrupt();
            let signal = tokio::signal::unix::signal(kind)
                .map_err(|e| Failure::io(format!("cannot catch Ctrl-C: {e}")))?;
            Ok(Interrupts { signal })
        }
        #[cfg(not(unix))]
        Ok(Interrupts {})
    }

    /// The next Ctrl-C.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            if self.signal.recv().await.is_none() {
                futures::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                futures::future::pending::<()>().await;
            }
        }
    }

    /// Forgets a Ctrl-C that came between answers.
    fn forget(&mut self) {
        while self.next().now_or_never().is_some() {}
    }
}

/// The conversation in `file`, if it exists.
fn load(file: &Path) -> Result<Option<History>, Failure> {
    match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            Failure::io(format!(
                "{}: not a saved conversation ({e}); give another --resume file",
                file.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::io(format!(
            "{}: cannot read it: {e}",
            file.display()
        ))),
    }
}

/// Writes `history` to `file` whole (a crash leaves the old conversation
/// or the new one, never half of one).
fn save(file: &Path, history: &History) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(history)?;
    bytes.push(b'\n');
    crate::output::write_whole(file, &bytes)
}

/// The file `file` leads to through its symlinks (which may not exist
/// yet), so that saving replaces that file and keeps the links.
fn through_links(file: PathBuf) -> Result<PathBuf, Failure> {
    // As many links as Linux follows in one path.
    const MAX_LINKS: usize = 40;
    let mut path = file;
    for _ in 0..MAX_LINKS {
        match std::fs::read_link(&path) {
            // Relative to the link's folder; an absolute target replaces it.
            Ok(target) => path = path.parent().unwrap_or(Path::new("")).join(target),
            Err(_) => return Ok(path),
        }
    }
    Err(Failure::io(format!(
        "{}: too many levels of symbolic links; give another --resume file",
        path.display()
    )))
}

/// The file of a new session, in the user's data folder.
fn session_file(session_id: &str) -> Result<PathBuf, Failure> {
    let folder = dirs::data_local_dir()
        .ok_or_else(|| Failure::io("no data folder for sessions; pass --resume FILE"))?;
    Ok(folder
        .join("skillkit")
        .join("sessions")
        .join(format!("{session_id}.json")))
}

/// Shows the earlier turns of a resumed conversation.
fn replay(history: &History) {
    out!("(resumed: {} earlier messages)", history.messages.len());
    for message in &history.messages {
        match message {
            Message::User { text } => out!("> {}", shorten(text, 200)),
            Message::Assistant(answer) if !answer.text.is_empty() => out!("{}", answer.text),
            Message::Compaction(compaction) => {
                out!("  ~~ {}", crate::view::compacted(compaction))
            }
            _ => {}
        }
    }
}

/// How full the window is, for a person: `context: 12% of 200,000 tokens
/// (24,000; compacts at 160,000)`.
fn context_line(used: &ContextUse) -> String {
    let mut line = format!(
        "context: {}% of {} tokens ({}",
        used.percent(),
        thousands(used.window),
        thousands(used.tokens)
    );
    if let Some(at) = used.compact_at {
        line.push_str(&format!("; compacts at {}", thousands(at)));
    }
    line.push(')');
    line
}

/// `n` with a comma between thousands.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
