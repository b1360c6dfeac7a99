//! Which interpreter runs a script: the one its `#!` line names, else the
//! one its extension names; only `python3`, `bash`, `sh` and `node`.

use std::io::Read;
use std::path::Path;

/// What a refusal tells the model it may use.
const KNOWN: &str = "python3 (.py), bash (.bash), sh (.sh) or node (.js, .mjs, .cjs)";

/// The interpreter for the script at `path` (`shown` as the caller named
/// it), or why there is none.
pub(super) fn pick(path: &Path, shown: &str) -> Result<&'static str, String> {
    let mut head = [0u8; 256];
    let read = skillkit_parser::open_file(path)
        .and_then(|(mut file, _)| file.read(&mut head))
        .map_err(|e| format!("`{shown}` cannot be read ({e})"))?;
    let head = &head[..read];
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let mut program = words.next().map(basename).unwrap_or_default();
        if program == "env" {
            program = words.find(|w| !w.starts_with('-')).unwrap_or_default();
        }
        return by_name(program).ok_or_else(|| {
            format!(
                "`{shown}` asks for `{}` on its #! line, which run_skill_script does not run; \
                 it runs {KNOWN}",
                program.escape_debug()
            )
        });
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match extension {
        "py" => Ok("python3"),
        "sh" => Ok("sh"),
        "bash" => Ok("bash"),
        "js" | "mjs" | "cjs" => Ok("node"),
        _ => Err(format!(
            "`{shown}` has no #! line and no extension run_skill_script knows; it runs {KNOWN}"
        )),
    }
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn by_name(program: &str) -> Option<&'static str> {
    match program {
        "python3" | "python" => Some("python3"),
        "bash" => Some("bash"),
        "sh" | "dash" => Some("sh"),
        "node" | "nodejs" => Some("node"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick_for(name: &str, text: &str) -> Result<&'static str, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        pick(&path, name)
    }

    #[test]
    fn the_shebang_wins_then_the_extension() {
        assert_eq!(pick_for("a.py", "print(1)\n"), Ok("python3"));
        assert_eq!(
            pick_for("a", "#!/usr/bin/env python3\nprint(1)"),
            Ok("python3")
        );
        assert_eq!(pick_for("a.sh", "#!/bin/bash\necho"), Ok("bash"));
        assert_eq!(pick_for("a.sh", "echo"), Ok("sh"));
        assert_eq!(pick_for("a.js", "1"), Ok("node"));
        assert_eq!(pick_for("a", "#!/usr/bin/env -S node --x\n"), Ok("node"));
        let err = pick_for("a.rb", "puts 1").unwrap_err();
        assert!(err.contains("no #! line and no extension"), "{err}");
        let err = pick_for("a.py", "#!/usr/bin/ruby\n").unwrap_err();
        assert!(err.contains("asks for `ruby`"), "{err}");
    }
}
