//! `skillkit verify`: each skill the project's lockfile pins against its
//! folder (`ok`, `modified` with the files, `missing`, `outside` when the
//! lock's path for it leaves the project, `bad-signature`), and each skill in
//! the project's skill folders the lock does not know (`unlocked`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use skillkit::lockfile::{
    AllowedSigners, LOCKFILE_NAME, Lockfile, SKILL_FOLDERS, Status, verify_signed,
};

use crate::output::{err, out};

/// Runs `verify` in `project` (the working folder by default) against
/// `lock` (its `skillkit.lock.json` by default). Exit 0 only when every
/// skill is `ok`; 1 when one is not; 2 when the lock cannot be read.
pub fn run(
    project: Option<&Path>,
    lock: Option<&Path>,
    allowed_signers: Option<&Path>,
    json: bool,
) -> ExitCode {
    let project = project.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let path = lock.map_or_else(|| project.join(LOCKFILE_NAME), Path::to_path_buf);
    let lock = match Lockfile::read(&path) {
        Ok(lock) => lock,
        Err(error) => {
            err!("error: {error}");
            return ExitCode::from(crate::exit::IO);
        }
    };
    let allowed = match allowed_signers.map(AllowedSigners::read).transpose() {
        Ok(allowed) => allowed,
        Err(error) => {
            err!("error: {error}");
            return ExitCode::from(crate::exit::IO);
        }
    };
    let verdicts = verify_signed(&lock, &project, &SKILL_FOLDERS, allowed.as_ref());
    let all_ok = verdicts.iter().all(|v| v.status == Status::Ok);
    if json {
        let lines: Vec<serde_json::Value> = verdicts
            .iter()
            .map(|v| {
                let mut line = serde_json::to_value(&v.status).unwrap_or_default();
                line["name"] = v.name.clone().into();
                line
            })
            .collect();
        out!("{}", serde_json::json!({ "skills": lines, "ok": all_ok }));
    } else {
        for verdict in &verdicts {
            let mut line = format!("{} {}", verdict.status.as_str(), verdict.name);
            if let Status::Modified {
                changed,
                added,
                removed,
            } = &verdict.status
            {
                for (what, files) in [("changed", changed), ("added", added), ("removed", removed)]
                {
                    if !files.is_empty() {
                        line.push_str(&format!("; {what}: {}", files.join(", ")));
                    }
                }
            }
            if let Status::BadSignature { reason } = &verdict.status {
                line.push_str(&format!("; {reason}"));
            }
            if let Status::Outside { reason } = &verdict.status {
                line.push_str(&format!("; {reason}"));
            }
            out!("{}", crate::output::inert(&line));
        }
        if verdicts.is_empty() {
            out!("the lock pins no skill, and the project's skill folders hold none");
        }
    }
    match all_ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(crate::exit::FAILED),
    }
}
