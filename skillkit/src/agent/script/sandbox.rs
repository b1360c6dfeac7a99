//! The kernel sandbox of a script, on Linux: a Landlock ruleset built in the
//! parent and applied in the child before the interpreter starts. Reads
//! anywhere, writes only in the working folder and `/dev/null`, TCP
//! `connect`/`bind` denied (Landlock ABI 4 and later), abstract UNIX sockets
//! and signals scoped to the sandbox (ABI 6 and later).

use std::fmt;
use std::path::Path;

/// What the kernel enforces on a script, said in its result.
///
/// ```
/// use skillkit::script::Sandbox;
/// let none = Sandbox::Unenforced { reason: "this kernel has no Landlock".into() };
/// assert!(none.to_string().contains("NOT sandboxed"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sandbox {
    /// Writes only in the working folder, and no TCP.
    Full {
        /// The kernel's Landlock ABI version.
        abi: i32,
    },
    /// Writes only in the working folder; the network is not restricted
    /// (the kernel's Landlock is older than ABI 4).
    NoNetworkRule {
        /// The kernel's Landlock ABI version.
        abi: i32,
    },
    /// Nothing is enforced by the kernel.
    Unenforced {
        /// Why: no Landlock in this kernel, or not on Linux.
        reason: String,
    },
}

impl Sandbox {
    /// What this kernel enforces, without running anything.
    ///
    /// ```
    /// let sandbox = skillkit::script::Sandbox::current();
    /// println!("scripts: {sandbox}");
    /// ```
    pub fn current() -> Sandbox {
        #[cfg(target_os = "linux")]
        {
            let abi = linux::kernel_abi();
            match abi {
                ..=0 => Sandbox::Unenforced {
                    reason: "this kernel has no Landlock, or it is disabled".to_owned(),
                },
                1..=3 => Sandbox::NoNetworkRule { abi },
                _ => Sandbox::Full { abi },
            }
        }
        #[cfg(not(target_os = "linux"))]
        Sandbox::Unenforced {
            reason: "there is no kernel sandbox for scripts on this platform (Landlock is Linux's)"
                .to_owned(),
        }
    }

    /// Whether the kernel restricts writes and the network.
    pub fn is_full(&self) -> bool {
        matches!(self, Sandbox::Full { .. })
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sandbox::Full { abi } => write!(
                f,
                "Landlock (kernel ABI {abi}): writes only in the working folder, no TCP connections"
            ),
            Sandbox::NoNetworkRule { abi } => write!(
                f,
                "Landlock (kernel ABI {abi}): writes only in the working folder; the network is NOT \
                 restricted (this kernel cannot: Landlock ABI 4, Linux 6.7, is needed)"
            ),
            Sandbox::Unenforced { reason } => write!(
                f,
                "NOT sandboxed: {reason}; the script can write wherever this process can and use \
                 the network"
            ),
        }
    }
}

/// The rules for one script, ready to apply in its child process.
pub(super) struct Prepared {
    pub(super) sandbox: Sandbox,
    #[cfg(target_os = "linux")]
    pub(super) ruleset: Option<landlock::RulesetCreated>,
}

/// The rules for a script working in `work` (canonical).
pub(super) fn prepare(work: &Path) -> Result<Prepared, String> {
    let sandbox = Sandbox::current();
    #[cfg(target_os = "linux")]
    {
        let ruleset = match &sandbox {
            Sandbox::Full { abi } | Sandbox::NoNetworkRule { abi } => Some(
                linux::ruleset(*abi, work)
                    .map_err(|e| format!("the Landlock sandbox cannot be built ({e})"))?,
            ),
            Sandbox::Unenforced { .. } => None,
        };
        Ok(Prepared { sandbox, ruleset })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = work;
        Ok(Prepared { sandbox })
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::Path;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
        RulesetError, Scope, path_beneath_rules,
    };

    /// The kernel's Landlock ABI version; 0 or less when it has none.
    pub(super) fn kernel_abi() -> i32 {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: the documented version query: no ruleset, size 0, only
        // the version flag; it reads and writes no memory.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        i32::try_from(version).unwrap_or(0)
    }

    /// Reads anywhere, everything in `work` and `/dev/null`, no TCP (ABI 4+),
    /// abstract sockets and signals scoped (ABI 6+).
    pub(super) fn ruleset(abi: i32, work: &Path) -> Result<RulesetCreated, RulesetError> {
        let abi = ABI::from(abi);
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(abi))?;
        if abi >= ABI::V4 {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
        }
        if abi >= ABI::V6 {
            ruleset = ruleset.scope(Scope::from_all(abi))?;
        }
        let write = [work, Path::new("/dev/null")];
        ruleset
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules(write, AccessFs::from_all(abi)))
    }
}
