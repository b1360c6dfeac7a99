//! The Landlock layer: reads anywhere, writes only in the working folder and
//! `/dev/null`, TCP `bind`/`connect` denied (ABI 4 and later), abstract UNIX
//! sockets and signals scoped to the sandbox (ABI 6 and later).

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    RulesetError, Scope, path_beneath_rules,
};

/// The kernel's Landlock ABI version; 0 or less when it has none.
pub(super) fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no ruleset, size 0, only the
    // version flag; it reads and writes no memory.
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

/// The ruleset for a script working in `work`, at Landlock ABI `abi`.
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
