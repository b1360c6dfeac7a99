//! The kernel sandbox of a script, on Linux: three layers, each built in the
//! parent and put up in the child before the interpreter starts.
//!
//! * **namespaces** (`namespaces.rs`): a user, mount, PID, network and IPC
//!   namespace of the script's own. The file system is read-only outside the
//!   working folder (no change of content, metadata, extended attributes,
//!   links or names: the kernel answers `EROFS`), the secret places
//!   ([`ScriptOptions::hide`](super::ScriptOptions::hide)) are empty, `/proc`
//!   shows the script's own processes only, the network has no interface
//!   but a loopback that is down, and when the script ends every process it
//!   started ends with it, whatever it did to its session or group (the
//!   namespace's first process is the script; the kernel kills the rest when
//!   it exits). Every capability is dropped before the interpreter starts.
//! * **Landlock** (`landlock.rs`): writes only in the working folder and
//!   `/dev/null`, TCP `bind`/`connect` denied (ABI 4 and later), abstract
//!   UNIX sockets and signals scoped to the sandbox (ABI 6 and later).
//! * **seccomp** (`seccomp.rs`): no `socket()` of any family, and
//!   `socketpair()` for connected UNIX sockets only (a script's processes
//!   talking to each other), so no socket reaches anything outside it, not
//!   even a UNIX socket by path; no `io_uring` (it would reach sockets past
//!   the filter), no kernel keyrings, no `bpf`, `perf_event_open`,
//!   `userfaultfd`, and no mount or namespace calls.
//!
//! [`Sandbox::current`] says which layers this kernel puts up; a run where
//! one is missing is refused unless the application accepts the weaker
//! sandbox ([`ScriptOptions::allow_weaker_sandbox`](super::ScriptOptions::allow_weaker_sandbox)),
//! and every result says exactly which layers were in force.

#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod seccomp;

use std::fmt;
use std::path::Path;

use super::ScriptOptions;

/// One layer of the script sandbox, and what it enforces.
///
/// ```
/// use skillkit::script::Layer;
/// assert!(Layer::Seccomp.to_string().contains("no sockets"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layer {
    /// Namespaces of the script's own (user, mount, PID, network, IPC).
    Namespaces,
    /// Landlock, at the kernel's ABI version.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: i32,
    },
    /// A seccomp filter on sockets and the other kernel doors.
    Seccomp,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layer::Namespaces => f.write_str(
                "namespaces (the file system read-only outside the working folder: no change \
                 of content, metadata, links or names; secret folders hidden; /proc shows the \
                 script's own processes only; no network interface; no process outlives the \
                 run; no capabilities)",
            ),
            Layer::Landlock { abi } if *abi >= 4 => write!(
                f,
                "Landlock ABI {abi} (writes only in the working folder; no TCP)"
            ),
            Layer::Landlock { abi } => {
                write!(f, "Landlock ABI {abi} (writes only in the working folder)")
            }
            Layer::Seccomp => f.write_str(
                "seccomp (no sockets: only connected UNIX socket pairs between the script's \
                 own processes; no io_uring, keyrings, bpf, mounts or namespaces)",
            ),
        }
    }
}

/// What the kernel enforces on a script: the layers in force and, for each
/// one missing, why. Said in every result.
///
/// ```
/// let sandbox = skillkit::script::Sandbox::current();
/// println!("scripts: {sandbox}");
/// if !sandbox.is_full() {
///     for missing in sandbox.missing() {
///         eprintln!("missing: {missing}");
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    layers: Vec<Layer>,
    missing: Vec<String>,
}

impl Sandbox {
    /// What this kernel puts up around a script. The first call tries the
    /// namespaces once, in a child process that runs `sh -c :`, and the
    /// answer is kept for the life of the process.
    ///
    /// ```
    /// let sandbox = skillkit::script::Sandbox::current();
    /// assert_eq!(sandbox.is_full(), sandbox.missing().is_empty());
    /// ```
    pub fn current() -> Sandbox {
        #[cfg(target_os = "linux")]
        {
            static CURRENT: std::sync::OnceLock<Sandbox> = std::sync::OnceLock::new();
            CURRENT.get_or_init(linux_current).clone()
        }
        #[cfg(not(target_os = "linux"))]
        Sandbox {
            layers: Vec::new(),
            missing: vec![
                "there is no kernel sandbox for scripts on this platform (SkillKit's is Linux's: \
                 namespaces, Landlock and seccomp)"
                    .to_owned(),
            ],
        }
    }

    /// The layers in force.
    ///
    /// ```
    /// let sandbox = skillkit::script::Sandbox::current();
    /// for layer in sandbox.layers() {
    ///     println!("{layer}");
    /// }
    /// ```
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// For each layer missing, what is missing and why.
    ///
    /// ```
    /// let sandbox = skillkit::script::Sandbox::current();
    /// assert_eq!(sandbox.missing().is_empty(), sandbox.is_full());
    /// ```
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// Whether every layer is in force.
    ///
    /// ```
    /// let full = skillkit::script::Sandbox::current().is_full();
    /// # let _ = full;
    /// ```
    pub fn is_full(&self) -> bool {
        self.missing.is_empty()
    }

    /// Whether `layer` (of any Landlock ABI, for Landlock) is in force.
    ///
    /// ```
    /// use skillkit::script::{Layer, Sandbox};
    /// let seccomp = Sandbox::current().has(Layer::Seccomp);
    /// # let _ = seccomp;
    /// ```
    pub fn has(&self, layer: Layer) -> bool {
        self.layers.iter().any(|l| match (l, layer) {
            (Layer::Landlock { .. }, Layer::Landlock { .. }) => true,
            (l, layer) => *l == layer,
        })
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.layers.is_empty() {
            f.write_str("NOT sandboxed")?;
        } else {
            for (i, layer) in self.layers.iter().enumerate() {
                if i > 0 {
                    f.write_str("; ")?;
                }
                write!(f, "{layer}")?;
            }
        }
        for missing in &self.missing {
            write!(f, "; NOT enforced: {missing}")?;
        }
        Ok(())
    }
}

/// The layers for one script, ready to put up in its child process.
pub(super) struct Prepared {
    pub(super) sandbox: Sandbox,
    #[cfg(target_os = "linux")]
    pub(super) child: Option<linux::Child>,
}

/// The sandbox for a script working in `work` (canonical) under `options`:
/// `Err` saying what is missing, and how to accept it, when a layer is
/// missing and the options do not accept a weaker sandbox.
pub(super) fn prepare(work: &Path, options: &ScriptOptions) -> Result<Prepared, String> {
    let sandbox = Sandbox::current();
    if !sandbox.is_full() && !options.allow_weaker_sandbox {
        return Err(refusal(&sandbox));
    }
    #[cfg(target_os = "linux")]
    {
        let child = linux::Child::new(&sandbox, work, &options.hidden)?;
        Ok(Prepared {
            sandbox,
            child: Some(child),
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = work;
        Ok(Prepared { sandbox })
    }
}

/// Why a script is not run where a layer is missing, and what accepts it.
pub(super) fn refusal(sandbox: &Sandbox) -> String {
    format!(
        "the script was not run: its sandbox is incomplete here ({}); run it where every layer \
         is available (Linux with user namespaces, Landlock and seccomp), or accept the weaker \
         sandbox with --allow-weaker-sandbox (ScriptOptions::allow_weaker_sandbox in code)",
        sandbox.missing.join("; ")
    )
}

#[cfg(target_os = "linux")]
fn linux_current() -> Sandbox {
    let mut layers = Vec::new();
    let mut missing = Vec::new();
    match namespaces::probe() {
        Ok(()) => layers.push(Layer::Namespaces),
        Err(why) => missing.push(format!(
            "namespaces ({why}): the script could change metadata outside its working folder, \
             read other processes' /proc entries and leave processes running"
        )),
    }
    match landlock::kernel_abi() {
        abi @ 1.. => layers.push(Layer::Landlock { abi }),
        _ => missing.push(
            "Landlock (this kernel has none, or it is disabled; Linux 5.13 or later has it): \
             the script could write wherever this process can"
                .to_owned(),
        ),
    }
    match seccomp::filter() {
        Ok(_) => layers.push(Layer::Seccomp),
        Err(why) => missing.push(format!("seccomp ({why}): the script could open sockets")),
    }
    Sandbox { layers, missing }
}

#[cfg(target_os = "linux")]
pub(super) mod linux {
    use std::io;
    use std::path::{Path, PathBuf};

    use super::{Layer, Sandbox, landlock, namespaces, seccomp};

    /// What the child process puts up before the interpreter starts, built
    /// in the parent (nothing is allocated after the fork).
    pub(in crate::dispatch::script) struct Child {
        namespaces: Option<namespaces::Namespaces>,
        landlock: Option<::landlock::RulesetCreated>,
        seccomp: Option<seccompiler::BpfProgram>,
    }

    impl Child {
        pub(super) fn new(
            sandbox: &Sandbox,
            work: &Path,
            hidden: &[PathBuf],
        ) -> Result<Child, String> {
            let namespaces = sandbox
                .has(Layer::Namespaces)
                .then(|| namespaces::Namespaces::new(work, hidden))
                .transpose()?;
            let landlock = sandbox
                .layers
                .iter()
                .find_map(|layer| match layer {
                    Layer::Landlock { abi } => Some(*abi),
                    _ => None,
                })
                .map(|abi| landlock::ruleset(abi, work))
                .transpose()
                .map_err(|e| format!("the Landlock sandbox cannot be built ({e})"))?;
            let seccomp = sandbox
                .has(Layer::Seccomp)
                .then(seccomp::filter)
                .transpose()?;
            Ok(Child {
                namespaces,
                landlock,
                seccomp,
            })
        }

        /// Puts the layers up; runs in the forked child, before `exec`.
        /// With namespaces, the child forks again: the process that returns
        /// is the first of the new PID namespace, and the one that called
        /// waits for it and exits as it does (see `namespaces.rs`).
        pub(in crate::dispatch::script) fn enter(&mut self) -> io::Result<()> {
            if let Some(namespaces) = &self.namespaces {
                namespaces.enter()?;
            }
            if let Some(ruleset) = self.landlock.take() {
                ruleset
                    .restrict_self()
                    .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
            }
            if self.namespaces.is_some() {
                namespaces::drop_capabilities()?;
            }
            if let Some(filter) = &self.seccomp {
                seccompiler::apply_filter(filter)
                    .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
            }
            Ok(())
        }

        /// Whether the script runs in a PID namespace of its own.
        pub(in crate::dispatch::script) fn has_namespaces(&self) -> bool {
            self.namespaces.is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_states_the_layers_in_force_and_what_is_missing() {
        let partial = Sandbox {
            layers: vec![Layer::Landlock { abi: 3 }],
            missing: vec!["namespaces (user namespaces are disabled)".to_owned()],
        };
        let text = partial.to_string();
        assert!(text.starts_with("Landlock ABI 3 (writes only in the working folder)"));
        assert!(
            !text.contains("no TCP"),
            "ABI 3 has no network rule: {text}"
        );
        assert!(text.contains("NOT enforced: namespaces (user namespaces are disabled)"));
        assert!(!partial.is_full());
        assert!(partial.has(Layer::Landlock { abi: 1 }));
        assert!(!partial.has(Layer::Seccomp));
        let refused = refusal(&partial);
        assert!(
            refused.contains("user namespaces are disabled"),
            "{refused}"
        );
        assert!(refused.contains("--allow-weaker-sandbox"), "{refused}");

        let none = Sandbox {
            layers: Vec::new(),
            missing: vec!["everything".to_owned()],
        };
        assert!(
            none.to_string()
                .starts_with("NOT sandboxed; NOT enforced: everything")
        );
    }

    #[test]
    fn a_missing_layer_refuses_unless_the_options_accept_it() {
        let sandbox = Sandbox::current();
        let work = std::env::temp_dir();
        let strict = prepare(&work, &ScriptOptions::new());
        assert_eq!(strict.is_ok(), sandbox.is_full());
        let weaker = prepare(&work, &ScriptOptions::new().allow_weaker_sandbox(true));
        assert!(weaker.is_ok());
    }
}
