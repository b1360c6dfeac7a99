//! `--mcp 'COMMAND ARGS'` and `--mcp-url URL` on `list` and `run`: the
//! skills of an MCP server (with the skills extension, on the official Rust
//! SDK; or the Python SDK's `skill://` resources), through the real binary.

use std::path::Path;

use skillkit_tests::mcp_server::SkillsServer;
use skillkit_tests::{peers, skill_md, write};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary with `args`, in `dir`, with a home and a cache of its own.
fn skillkit(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_skillkit"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("SKILLKIT_CACHE_DIR", dir.join("cache"))
        .env_remove("SKILLKIT_MCP_TOKEN")
        .env_remove("SKILLKIT_MODEL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run skillkit")
}

/// `list --mcp-url` lists the server's skills (its kit named after the
/// server), its descriptions made inert, and nothing of the standard
/// locations; `run --mcp-url` activates one, read from the server.
#[test]
fn list_and_run_take_the_skills_of_an_mcp_server_by_url() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(SkillsServer::start("acme"));
    server.put(
        "pdf",
        &skill_md(
            "pdf",
            "Read PDFs.\u{1b}[2J",
            "Run pdftotext on $ARGUMENTS.\n",
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path().join(".agents/skills/local/SKILL.md"),
        skill_md("local", "A project skill.", "x"),
    );

    let out = skillkit(dir.path(), &["list", "--mcp-url", server.url()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("kit test-skills (1 skills, 0 agents)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("skill test-skills:pdf: Read PDFs.\\u{1b}[2J"),
        "{stdout}"
    );
    assert!(!stdout.contains("local"), "{stdout}");

    write(
        dir.path().join("helper/AGENT.md"),
        "---\nname: helper\ndescription: Helps.\n---\nHelp.\n",
    );
    let script = dir.path().join("script.json");
    write(
        &script,
        r#"[
            {"tool_calls": [{"name": "activate_skill", "input": {"name": "test-skills:pdf", "arguments": "a.pdf"}}]},
            {"text": "Read."}
        ]"#,
    );
    let model = format!("scripted://{}", script.display());
    let out = skillkit(
        dir.path(),
        &[
            "run",
            "helper",
            "Read a.pdf",
            "--model",
            &model,
            "--mcp-url",
            server.url(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "Read.\n");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Run pdftotext on a.pdf."), "{stderr}");
    assert_eq!(server.reads(&server.uri("pdf")), 1);

    // A person runs it (`run --skill`, as chat's `/name`): read from the server too.
    let out = skillkit(
        dir.path(),
        &[
            "run",
            "helper",
            "b.pdf",
            "--skill",
            "test-skills:pdf",
            "--model",
            &model,
            "--mcp-url",
            server.url(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out.stderr).contains("(using test-skills:pdf)"),
        "{out:?}"
    );
    assert_eq!(server.reads(&server.uri("pdf")), 2);
}

/// `list --mcp 'COMMAND ARGS'` starts the server and lists its skills; a
/// server that cannot start is one line on stderr and exit 2 (a source
/// that cannot be read); a command line that does not parse is a usage
/// error.
#[test]
fn list_takes_an_mcp_server_by_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = skillkit(dir.path(), &["list", "--mcp", "no-such-mcp-server-program"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        text(&out.stderr).contains("no-such-mcp-server-program"),
        "{out:?}"
    );
    let out = skillkit(dir.path(), &["list", "--mcp", "'unclosed"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("quote"), "{out:?}");

    let Some(python) = peers::python_or_skip("`list --mcp` against the Python MCP SDK") else {
        return;
    };
    let root = dir.path().join("skills");
    write(
        root.join("notes/SKILL.md"),
        skill_md("notes", "Keep notes.", "x"),
    );
    let command = format!(
        "'{}' '{}' '{}' docs",
        python.display(),
        peers::dir().join("skills_server.py").display(),
        root.display()
    );
    let out = skillkit(dir.path(), &["list", "--json", "--mcp", &command]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["kits"][0]["name"], "python-skills");
    assert_eq!(
        listed["kits"][0]["skills"][0]["name"],
        "python-skills:notes"
    );
    assert_eq!(listed["failures"], serde_json::json!([]));
}
