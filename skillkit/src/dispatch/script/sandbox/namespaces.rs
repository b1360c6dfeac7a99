//! The namespace layer. In the forked child, before `exec`:
//!
//! 1. `unshare` a user, mount, PID, network and IPC namespace (the user
//!    namespace maps this process's user and group to themselves, so files
//!    keep their owners; every namespace is owned by it, so nothing done
//!    inside has power over the machine's);
//! 2. fork again: the new child is the first process (PID 1) of the new PID
//!    namespace and becomes the script; the process that forked closes
//!    every descriptor but the standard three, waits for it and exits as it
//!    did, so the runner sees the script's own exit. When the first process
//!    of a PID namespace ends, the kernel kills every other one in it, so
//!    nothing the script started (a daemon that called `setsid`, a process
//!    group of its own) outlives it; and when the forking process is killed
//!    (the timeout), the script is killed with it (`PR_SET_PDEATHSIG`);
//! 3. in the script's process: mounts made private, the working folder bound
//!    onto itself, each hidden place covered (an empty read-only `tmpfs` on
//!    a folder, `/dev/null` on a file), a new `/proc` mounted (it shows this
//!    namespace's processes only), then every mount made read-only,
//!    recursively (`mount_setattr`), but the working folder's; and the
//!    working folder entered again (the old one was on the read-only mount).
//!
//! After Landlock is applied (mounts can no longer change), every
//! capability is dropped, for good: the bounding set emptied, and `root`
//! given no capability on `exec` (`SECBIT_NOROOT`, locked).
//!
//! Nothing is allocated after the fork: every path and text is made before.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`, `SECBIT_NO_CAP_AMBIENT_RAISE`
/// and their locks (`<linux/securebits.h>`).
const SECURE_BITS: libc::c_ulong = 0b1100_1111;

/// What the child needs to enter the namespaces, made in the parent.
pub(super) struct Namespaces {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    work: CString,
    hide_folders: Vec<CString>,
    hide_files: Vec<CString>,
}

impl Namespaces {
    /// For a script working in `work` (canonical), with `hidden` covered
    /// (those that exist; each resolved, so a link covers what it names).
    pub(super) fn new(work: &Path, hidden: &[PathBuf]) -> Result<Namespaces, String> {
        let c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes())
                .map_err(|_| format!("{} holds a NUL byte", path.display()))
        };
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut hide_folders = Vec::new();
        let mut hide_files = Vec::new();
        for path in hidden {
            let Ok(path) = std::fs::canonicalize(path) else {
                continue;
            };
            // The working folder is never hidden, nor what holds it.
            if work.starts_with(&path) {
                continue;
            }
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => hide_folders.push(c(&path)?),
                Ok(_) => hide_files.push(c(&path)?),
                Err(_) => {}
            }
        }
        Ok(Namespaces {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            work: c(work)?,
            hide_folders,
            hide_files,
        })
    }

    /// Enters the namespaces (see the module's docs); returns in the
    /// script's process only.
    pub(super) fn enter(&self) -> io::Result<()> {
        let flags = libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC;
        // SAFETY: plain flags; the child is single-threaded, as a user
        // namespace needs.
        check(unsafe { libc::unshare(flags) })?;
        write(c"/proc/self/setgroups", b"deny")?;
        write(c"/proc/self/uid_map", &self.uid_map)?;
        write(c"/proc/self/gid_map", &self.gid_map)?;
        // SAFETY: fork in a single-threaded child; both sides go on with
        // async-signal-safe calls only.
        match unsafe { libc::fork() } {
            -1 => return Err(io::Error::last_os_error()),
            0 => {}
            script => relay(script),
        }
        // SAFETY: from here on, each call takes paths and texts made before
        // the fork (NUL-terminated) or null pointers where the call allows.
        unsafe {
            check(libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ))?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                self.work.as_ptr(),
                self.work.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            for folder in &self.hide_folders {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    folder.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,nr_inodes=1,mode=0".as_ptr().cast(),
                ))?;
            }
            for file in &self.hide_files {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    file.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
            check(libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ))?;
            set_attr(c"/", MOUNT_ATTR_RDONLY, 0)?;
            set_attr(&self.work, 0, MOUNT_ATTR_RDONLY)?;
            check(libc::chdir(self.work.as_ptr()))?;
        }
        Ok(())
    }
}

/// Drops every capability for good (after the mounts and Landlock): the
/// secure bits that keep `root` from regaining them on `exec`, the bounding
/// set, the ambient set, then the process's own sets.
pub(super) fn drop_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl and capset with plain values and structs that live on
    // this stack for the calls' length.
    unsafe {
        check(libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0))?;
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                // EINVAL: past the kernel's last capability.
                break;
            }
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        check(libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) as libc::c_int)?;
    }
    Ok(())
}

/// Whether the namespaces can be entered here: enters them in a child that
/// runs `sh -c :`, and says why not when it fails.
pub(super) fn probe() -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let work = std::env::temp_dir();
    let work = std::fs::canonicalize(&work).unwrap_or(work);
    let namespaces = Namespaces::new(&work, &[])?;
    let mut command = std::process::Command::new("/bin/sh");
    command
        .args(["-c", ":"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `enter` makes system calls only, with what `new` made.
    unsafe {
        command.pre_exec(move || namespaces.enter());
    }
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a process in them ended with {status}")),
        Err(e) => Err(format!(
            "they cannot be made here ({e}); user namespaces may be disabled \
             (kernel.unprivileged_userns_clone, user.max_user_namespaces) or refused by a \
             container's seccomp profile"
        )),
    }
}

/// Waits for the script's process `script`, then exits as it did. Runs in
/// the process that forked it, which holds nothing else: every descriptor
/// but the standard three is closed first, so the runner's `exec` check
/// (a pipe closed at `exec`) is answered by the script's process alone.
fn relay(script: libc::pid_t) -> ! {
    // SAFETY: async-signal-safe calls with plain values and a status on
    // this stack; the process ends in `_exit`.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
            for fd in 3..1024 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            if libc::waitpid(script, &mut status, 0) == script {
                break;
            }
            if *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let signal = libc::WTERMSIG(status);
        // Die of the same signal, so the runner reads the same ending.
        libc::signal(signal, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

/// Writes `bytes` to the file at `path` (a `/proc` control file).
fn write(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close with a NUL-terminated path and a
    // buffer of the length given.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        match usize::try_from(written) {
            Ok(n) if n == bytes.len() => Ok(()),
            _ => Err(error),
        }
    }
}

/// `mount_setattr(path, AT_RECURSIVE, {set, clear})`.
fn set_attr(path: &CStr, set: u64, clear: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a `mount_attr` on this stack, with
    // its size.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(done as libc::c_int)
}

fn check(result: libc::c_int) -> io::Result<()> {
    match result {
        0.. => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
