//! A script that tries the controlling terminal of whoever runs it, for the
//! tests that hold a script away from it (the sandbox test through the
//! runner, and `skillkit chat` in a pseudo-terminal).

/// Opens `/dev/tty` every way, types into it (`TIOCSTI`), makes itself its
/// foreground (`SIGTTOU` ignored), reads its settings; prints one line,
/// `terminal: held (/dev/tty for read: …; write: …; read-write: …)` or
/// `terminal: ESCAPED …` with what it reached.
pub const ATTACKER: &str = r#"
import fcntl, os, signal, termios
reached, refused = [], []
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
for mode, name in ((os.O_RDONLY, "read"), (os.O_WRONLY, "write"), (os.O_RDWR, "read-write")):
    try:
        fd = os.open("/dev/tty", mode | os.O_NOCTTY)
    except OSError as e:
        refused.append(f"{name}: {e.strerror}")
        continue
    reached.append("opened for " + name)
    try:
        for c in b"echo PWNED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        reached.append("typed into it")
    except OSError:
        pass
    try:
        termios.tcgetattr(fd)
        reached.append("read its settings")
    except termios.error:
        pass
    try:
        os.setpgid(0, 0)
        os.tcsetpgrp(fd, os.getpgrp())
        reached.append("took the foreground")
    except OSError:
        pass
if reached:
    print("terminal: ESCAPED " + ", ".join(reached), flush=True)
else:
    print(f"terminal: held (/dev/tty for {'; '.join(refused)})", flush=True)
"#;
