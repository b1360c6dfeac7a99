//! `skillkit run AGENT_DIR "task"`: one task, the answer on stdout, tool
//! calls on stderr; `--json`: the agent's events as JSON lines; `--skill
//! NAME`: a skill run by the person, its body rendered with the task as the
//! message.

use std::io::IsTerminal;

use skillkit::agent::EventKind;

use crate::agent::{self, decision};
use crate::args::{AgentArgs, Global};
use crate::explain;
use crate::failure::Failure;
use crate::output::{self, err, out};
use crate::show;
use crate::sources;
use crate::view::{Lines, View};

/// `skillkit run`.
pub fn run(
    global: &Global,
    args: &AgentArgs,
    task: &str,
    skill: Option<&str>,
    json: bool,
) -> Result<(), Failure> {
    let runtime = sources::runtime()?;
    let started = runtime.block_on(agent::start(global, args, None))?;
    if !json {
        err!(
            "agent {} · model {}",
            started.definition.name,
            started.model
        );
        if let Some(sandbox) = &started.scripts {
            err!("scripts enabled (run_skill_script); sandbox: {sandbox}");
        }
    }
    let message = match skill {
        Some(name) => {
            let snapshot = runtime.block_on(started.catalog.snapshot());
            let session = started.agent.session_id().to_owned();
            let (skill, text) = show::invoke(&runtime, &snapshot, name, task, &session)?;
            if !json {
                err!("(using {})", skill.name);
            }
            text
        }
        None => task.to_owned(),
    };
    let mut agent = started.agent;
    agent
        .send_message(&message)
        .map_err(|e| Failure::failed(explain::agent(&e)))?;
    let mut view = View::new(Lines::Stderr);
    while let Some(event) = runtime.block_on(agent.next_event()) {
        match json {
            true => out!(
                "{}",
                output::json(&event, false).map_err(|e| Failure::io(e.to_string()))?
            ),
            false => view.show(&event),
        }
        if output::reader_gone() {
            // Nobody reads the answer any more: stop it, and end quietly.
            agent.stop();
            return Ok(());
        }
        if let EventKind::InputRequested(request) = &event.kind {
            let answer = ask(&mut view, &crate::approval::approval(request));
            let _ = agent.respond(&request.call_id, decision(answer.as_deref()));
        }
        if event.is_end_of_message() {
            return match event.kind {
                EventKind::Error(error) => Err(Failure::failed(explain::agent(&error))),
                EventKind::Finished { .. } => Ok(()),
                _ => Err(Failure::failed("the answer was stopped")),
            };
        }
    }
    Err(Failure::failed("the agent stopped before answering"))
}

/// A person's answer on the terminal, or `None` when stdin is not one.
/// The call's whole input is shown first either way.
fn ask(view: &mut View, approval: &crate::approval::Approval) -> Option<String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        err!(
            "  ?? {}{}no terminal to ask: denied",
            approval.details,
            approval.question
        );
        return None;
    }
    view.prompt(&format!("{}{}", approval.details, approval.question));
    let mut line = String::new();
    match stdin.read_line(&mut line) {
        Ok(n) if n > 0 => Some(line),
        _ => None,
    }
}
