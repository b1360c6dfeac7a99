//! The seccomp layer: a filter (compiled by `seccompiler`, Firecracker's)
//! that answers `EPERM` to every call that would reach outside the script:
//!
//! * `socket()`, of any family: no TCP, MPTCP, UDP, raw, packet or netlink
//!   socket, and no UNIX socket either, since the kernel cannot tell by the
//!   filter whether a UNIX socket's path is inside the working folder;
//! * `socketpair()` other than `AF_UNIX` stream or seqpacket pairs: such a
//!   pair is connected at birth and reaches only its other end (a datagram
//!   pair could `sendto` any socket by path);
//! * `io_uring` (its operations open and connect sockets past this filter),
//!   the kernel keyrings (they hold this user's secrets), `bpf`,
//!   `perf_event_open`, `userfaultfd`, and every mount and namespace call.
//!
//! On x86-64, calls of the x32 ABI are refused whole (their numbers differ);
//! a call of another architecture (32-bit `int 0x80`) kills the process.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// The filter for this machine's architecture; `Err` saying why when
/// there is none.
pub(super) fn filter() -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        format!(
            "no seccomp filter is written for {} processors",
            std::env::consts::ARCH
        )
    })?;
    // SAFETY: reads this thread's seccomp mode; no memory is passed.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } < 0 {
        return Err("this kernel has no seccomp filters".to_owned());
    }
    let rules = rules().map_err(|e| format!("the seccomp filter cannot be built ({e})"))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| format!("the seccomp filter cannot be built ({e})"))?;
    let program = BpfProgram::try_from(filter)
        .map_err(|e| format!("the seccomp filter cannot be compiled ({e})"))?;
    Ok(match arch {
        TargetArch::x86_64 => [refuse_x32(), program].concat(),
        _ => program,
    })
}

/// The calls refused, each with the rules under which it is (none: always).
fn rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::Error> {
    let always = [
        libc::SYS_socket,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
    ];
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        always.into_iter().map(|call| (call, Vec::new())).collect();
    // socketpair(domain, type, ...): refused unless AF_UNIX, and refused for
    // a datagram pair (the low bits of `type` are the kind; the rest flags).
    rules.insert(
        libc::SYS_socketpair,
        vec![
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )?])?,
            SeccompRule::new(vec![SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_DGRAM as u64,
            )?])?,
        ],
    );
    Ok(rules)
}

/// On x86-64: calls numbered as the x32 ABI numbers them (bit 30 set) are
/// refused before the filter's own checks, which know x86-64's numbers only.
fn refuse_x32() -> BpfProgram {
    // BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JGE | BPF_K, BPF_RET | BPF_K.
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let errno = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    vec![
        // The call's number is at offset 0 of `struct seccomp_data`.
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
    ]
}
