//! One script run: the process in its own group, its environment, stdin
//! fed, stdout and stderr capped, the group killed at the end, at the
//! timeout, past the process cap, or when the call is dropped.

use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::ScriptOptions;
use super::sandbox::Sandbox;

/// A script that could not be started, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub(crate) String);

/// How a script's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// It ran past the timeout; its process group was killed.
    TimedOut(Duration),
    /// Its group held more processes than allowed; the group was killed.
    TooManyProcesses(usize),
}

/// One output stream of a script: the first bytes, and how many there were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Captured {
    /// The bytes kept (at most the cap), as text (invalid UTF-8 replaced).
    pub text: String,
    /// How many bytes were kept.
    pub shown: u64,
    /// How many bytes the script wrote.
    pub total: u64,
}

impl Captured {
    /// Whether bytes were dropped.
    pub fn truncated(&self) -> bool {
        self.total > self.shown
    }
}

/// A stream being read: the bytes kept so far and the count of all.
#[derive(Default)]
struct Reading {
    kept: Vec<u8>,
    total: u64,
}

impl Reading {
    fn done(self) -> Captured {
        Captured {
            shown: self.kept.len() as u64,
            text: String::from_utf8_lossy(&self.kept).into_owned(),
            total: self.total,
        }
    }
}

/// What a script did.
///
/// Its [`Display`](fmt::Display) is the result the model gets: how it
/// ended, the sandbox, then stdout and stderr, each saying when it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// How it ended.
    pub ending: Ending,
    /// What the kernel enforced.
    pub sandbox: Sandbox,
    /// Its standard output.
    pub stdout: Captured,
    /// Its standard error.
    pub stderr: Captured,
}

impl ScriptOutput {
    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        self.ending == Ending::Exited(0)
    }
}

impl fmt::Display for ScriptOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.ending {
            Ending::Exited(code) => writeln!(f, "exit code: {code}")?,
            Ending::Signalled(signal) => writeln!(f, "killed by signal {signal}")?,
            Ending::TimedOut(limit) => writeln!(
                f,
                "timed out: still running after {limit:?}, so its process group was killed"
            )?,
            Ending::TooManyProcesses(count) => writeln!(
                f,
                "stopped: it started more processes than allowed ({count} in its group), so its \
                 process group was killed"
            )?,
        }
        writeln!(f, "sandbox: {}", self.sandbox)?;
        for (name, stream) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            writeln!(f, "--- {name} ---")?;
            if stream.truncated() {
                writeln!(
                    f,
                    "[{name} truncated: {} bytes, first {} shown]",
                    stream.total, stream.shown
                )?;
            }
            f.write_str(&stream.text)?;
            if !stream.text.is_empty() && !stream.text.ends_with('\n') {
                f.write_str("\n")?;
            }
        }
        Ok(())
    }
}

/// Runs `script` (a path relative to `skill_dir`) with `args` and `stdin`,
/// in working folder `work`, under `options`: the folder's path rule, the
/// interpreter, the environment, the limits and the sandbox described in
/// [the module](crate::dispatch::script). `Err` when it could not be started.
///
/// ```no_run
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use skillkit::script::{run_script, ScriptOptions};
/// let work = tempfile::tempdir().unwrap();
/// let output = run_script(
///     "/kits/pdf/skills/fill".as_ref(),
///     "scripts/fill_form.py",
///     &["form.pdf".to_owned()],
///     "",
///     work.path(),
///     &ScriptOptions::new(),
/// )
/// .await
/// .unwrap();
/// println!("{output}");
/// # });
/// ```
pub async fn run_script(
    skill_dir: &Path,
    script: &str,
    args: &[String],
    stdin: &str,
    work: &Path,
    options: &ScriptOptions,
) -> Result<ScriptOutput, ScriptError> {
    let path = crate::dispatch::files::resolve_file(skill_dir, script).map_err(ScriptError)?;
    let interpreter = super::interpreter::pick(&path, script).map_err(ScriptError)?;
    let mut argv: Vec<OsString> = vec![path.into_os_string()];
    argv.extend(args.iter().map(OsString::from));
    run_program(interpreter, &argv, Some(skill_dir), stdin, work, options).await
}

/// Runs `program` with `argv` as a script is run.
pub(crate) async fn run_program(
    program: &str,
    argv: &[OsString],
    skill_dir: Option<&Path>,
    stdin: &str,
    work: &Path,
    options: &ScriptOptions,
) -> Result<ScriptOutput, ScriptError> {
    #[cfg(unix)]
    {
        unix::run(program, argv, skill_dir, stdin, work, options).await
    }
    #[cfg(not(unix))]
    {
        let _ = (program, argv, skill_dir, stdin, work, options);
        Err(ScriptError(
            "scripts are not supported on this platform (SkillKit runs them on Unix only)"
                .to_owned(),
        ))
    }
}

/// Reads `from` to its end, keeping the first `cap` bytes in `into`.
async fn capture(mut from: impl AsyncRead + Unpin, into: &mut Reading, cap: usize) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                into.total += n as u64;
                let room = cap.saturating_sub(into.kept.len());
                into.kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::ffi::OsString;
    use std::os::unix::process::ExitStatusExt;
    use std::path::Path;
    use std::process::Stdio;
    use std::time::Duration;

    use tokio::io::AsyncWriteExt;
    use tokio::process::Command;
    use tokio::sync::Notify;

    use super::{Ending, Reading, ScriptError, ScriptOutput, capture};
    use crate::dispatch::script::ScriptOptions;
    use crate::dispatch::script::sandbox;

    /// How often the group's processes are counted.
    const POLL: Duration = Duration::from_millis(100);
    /// How long the output is still read once the group is killed (a process
    /// that left the group may hold the pipes open).
    const DRAIN: Duration = Duration::from_secs(1);
    /// How long, at most, the processes of a killed script's namespace are
    /// waited for.
    const GONE: Duration = Duration::from_secs(5);

    /// Kills the whole process group when dropped.
    ///
    /// The group's id is its leader's pid (the forked child). While the
    /// leader is not reaped, or any member lives, the kernel keeps that
    /// number for the group, so a kill cannot reach a stranger; once the
    /// leader is reaped, the group is killed only while members remain
    /// ([`Group::reaped`]), and not at all when dropped.
    struct Group {
        pgid: libc::pid_t,
        reaped: bool,
    }

    impl Group {
        fn kill(&self) {
            // SAFETY: killpg takes plain integers; a group already gone is
            // ESRCH, which is fine.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }

        /// The leader was reaped: kills what is left of the group (a
        /// script without a PID namespace of its own may leave processes
        /// in it), and never again.
        fn reaped(&mut self, namespaced: bool) {
            self.reaped = true;
            // In a PID namespace, the leader ended after every process of
            // the namespace was gone.
            if !namespaced && group_size(self.pgid) > 0 {
                self.kill();
            }
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if !self.reaped {
                self.kill();
            }
        }
    }

    pub(super) async fn run(
        program: &str,
        argv: &[OsString],
        skill_dir: Option<&Path>,
        stdin: &str,
        work: &Path,
        options: &ScriptOptions,
    ) -> Result<ScriptOutput, ScriptError> {
        let prepared = sandbox::prepare(work, options).map_err(ScriptError)?;
        let mut command = Command::new(program);
        command
            .args(argv)
            .current_dir(work)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .env("HOME", work)
            .env("TMPDIR", work)
            .env("TERM", "dumb")
            .stdin(match stdin.is_empty() {
                true => Stdio::null(),
                false => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A session of its own, and so a process group of its own (which a
        // timeout kills whole): the script has no controlling terminal, so
        // it cannot type into the terminal this process runs in
        // (`TIOCSTI`), read from it or take it over, whatever the sandbox's
        // layers. First, before the sandbox's own steps.
        // SAFETY: runs in the forked child before exec; `setsid` is a
        // system call only, and the child is no group leader yet.
        unsafe {
            command.pre_exec(|| match libc::setsid() {
                -1 => Err(std::io::Error::last_os_error()),
                _ => Ok(()),
            });
        }
        for name in ["LANG", "LC_ALL"] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        if let Some(dir) = skill_dir {
            command.env("SKILL_DIR", dir).env("CLAUDE_SKILL_DIR", dir);
        }
        #[cfg(target_os = "linux")]
        let namespaced = prepared.child.as_ref().is_some_and(|c| c.has_namespaces());
        #[cfg(not(target_os = "linux"))]
        let namespaced = false;
        #[cfg(target_os = "linux")]
        if let Some(mut child) = prepared.child {
            // SAFETY: runs in the forked child before exec; it makes system
            // calls only, with what the parent built (nothing allocated).
            unsafe {
                command.pre_exec(move || child.enter());
            }
        }
        let mut child = command.spawn().map_err(|e| {
            ScriptError(match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "`{program}` is not installed here (not found on PATH), so this script cannot \
                     run; tell the user"
                ),
                _ => format!("the script could not be started ({e})"),
            })
        })?;
        let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
            return Err(ScriptError(
                "the script ended before it could be watched".into(),
            ));
        };
        let mut group = Group {
            pgid: pid,
            reaped: false,
        };
        // The script's PID namespace, named by the link the forked child's
        // `ns/pid_for_children` holds (it entered it before the script
        // started, so before `spawn` returned).
        let namespace = match namespaced {
            true => std::fs::read_link(format!("/proc/{pid}/ns/pid_for_children")).ok(),
            false => None,
        };
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let mut input = child.stdin.take();
        let (mut out, mut err) = (Reading::default(), Reading::default());
        let killed = Notify::new();
        let watch = async {
            let ending = watch(&mut child, pid, namespace.as_deref(), options).await;
            match ending {
                // `child.wait()` returned: the leader is reaped.
                Ending::Exited(_) | Ending::Signalled(_) => group.reaped(namespace.is_some()),
                Ending::TimedOut(_) | Ending::TooManyProcesses(_) => group.kill(),
            }
            if let Some(namespace) = &namespace {
                // Killed with the forked child; gone once the kernel has
                // reaped them, which this waits for (bounded).
                let start = std::time::Instant::now();
                while members(namespace) > 0 && start.elapsed() < GONE {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            killed.notify_one();
            ending
        };
        let read = async {
            let feed = async {
                if let Some(mut input) = input.take() {
                    // A script that does not read its stdin closes the pipe.
                    let _ = input.write_all(stdin.as_bytes()).await;
                }
            };
            let streams = async {
                tokio::join!(
                    async {
                        if let Some(s) = stdout {
                            capture(s, &mut out, options.max_output).await
                        }
                    },
                    async {
                        if let Some(s) = stderr {
                            capture(s, &mut err, options.max_output).await
                        }
                    },
                    feed,
                )
            };
            tokio::select! {
                _ = streams => {}
                () = async { killed.notified().await; tokio::time::sleep(DRAIN).await } => {}
            }
        };
        let (ending, ()) = tokio::join!(watch, read);
        Ok(ScriptOutput {
            ending,
            sandbox: prepared.sandbox,
            stdout: out.done(),
            stderr: err.done(),
        })
    }

    /// Waits for the script to end, the timeout, or its group to grow past
    /// the cap.
    async fn watch(
        child: &mut tokio::process::Child,
        pgid: i32,
        namespace: Option<&Path>,
        options: &ScriptOptions,
    ) -> Ending {
        let deadline = tokio::time::sleep(options.timeout);
        tokio::pin!(deadline);
        let mut poll = tokio::time::interval_at(tokio::time::Instant::now() + POLL, POLL);
        loop {
            tokio::select! {
                status = child.wait() => {
                    return match status {
                        Ok(status) => match (status.code(), status.signal()) {
                            (Some(code), _) => Ending::Exited(code),
                            (None, Some(signal)) => Ending::Signalled(signal),
                            (None, None) => Ending::Exited(-1),
                        },
                        Err(_) => Ending::Exited(-1),
                    };
                }
                () = &mut deadline => return Ending::TimedOut(options.timeout),
                _ = poll.tick() => {
                    // In a PID namespace of its own, every process of the
                    // script is in it, whatever group it made: one scan.
                    let count = match namespace {
                        Some(namespace) => members(namespace),
                        None => group_size(pgid),
                    };
                    if count > options.max_processes {
                        return Ending::TooManyProcesses(count);
                    }
                }
            }
        }
    }

    /// The processes of this machine, as their `/proc` folders.
    #[cfg(target_os = "linux")]
    fn processes() -> impl Iterator<Item = std::path::PathBuf> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|e| e.path())
    }

    /// How many processes are in the PID namespace `namespace` (the link
    /// its members' `ns/pid` hold; Linux only).
    fn members(namespace: &Path) -> usize {
        #[cfg(target_os = "linux")]
        {
            processes()
                .filter(|p| std::fs::read_link(p.join("ns/pid")).is_ok_and(|n| n == namespace))
                .count()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = namespace;
            0
        }
    }

    /// How many processes are in group `pgid` (Linux: read from `/proc`;
    /// elsewhere not counted).
    fn group_size(pgid: i32) -> usize {
        #[cfg(target_os = "linux")]
        {
            processes()
                .filter_map(|p| std::fs::read_to_string(p.join("stat")).ok())
                .filter(|stat| {
                    // pid (comm) state ppid pgrp ...; comm may hold spaces
                    // and parentheses, so read after the last `)`.
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(2))
                        .and_then(|pgrp| pgrp.parse::<i32>().ok())
                        == Some(pgid)
                })
                .count()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pgid;
            0
        }
    }
}
