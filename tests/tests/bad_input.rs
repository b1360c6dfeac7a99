//! Every class of bad input: a diagnostic naming the file and line, never a
//! panic, and the rest of the kit still loads.

use skillkit::{KitProvider, Local};
use skillkit_tests::{skill_md, write};

/// Loads a kit holding one good skill and `bad` at `skills/bad/SKILL.md`;
/// returns the diagnostic for the bad file (asserting the good skill loaded)
/// or `None` if the bad file loaded too.
async fn load_with(bad: &[u8]) -> (Vec<String>, Vec<skillkit::Diagnostic>) {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(
        kit.join("skills/good/SKILL.md"),
        skill_md("good", "Good.", "Fine."),
    );
    write(kit.join("skills/bad/SKILL.md"), bad);
    let kits = Local::new(&kit).list_kits().await.expect("the kit loads");
    let names = kits[0].skills.iter().map(|s| s.name.to_string()).collect();
    (names, kits[0].diagnostics.clone())
}

async fn assert_skipped(bad: &[u8], line: usize, needle: &str) {
    let (names, diagnostics) = load_with(bad).await;
    assert_eq!(names, ["k:good"], "only the good skill loads");
    let errors: Vec<_> = diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{diagnostics:?}");
    let error = errors[0];
    assert!(
        error
            .path
            .as_ref()
            .unwrap()
            .ends_with("skills/bad/SKILL.md"),
        "{error}"
    );
    assert_eq!(error.line, line, "{error}");
    assert!(
        error.message.contains(needle),
        "expected {needle:?} in {error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn non_utf8() {
    assert_skipped(
        b"---\nname: bad\ndescription: \xff\xfe\n---\n",
        3,
        "not valid UTF-8",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn non_map_yaml() {
    assert_skipped(b"---\n- a\n- b\n---\n", 2, "must be a YAML mapping").await;
    assert_skipped(b"---\njust text\n---\n", 2, "must be a YAML mapping").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_yaml_points_at_the_line() {
    assert_skipped(
        b"---\nname: bad\ndescription: [unclosed\n---\n",
        3,
        "unclosed bracket",
    )
    .await;
    assert_skipped(
        b"---\nname: bad\n  description: indented\n---\n",
        3,
        "invalid YAML",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn alias_bomb_and_deep_nesting() {
    let mut bomb = String::from("---\nname: bad\ndescription: d\na: &a [x,x,x,x,x,x,x,x,x,x]\n");
    let letters: Vec<char> = ('b'..='k').collect();
    let mut prev = 'a';
    for &c in &letters {
        let refs = vec![format!("*{prev}"); 10].join(",");
        bomb.push_str(&format!("{c}: &{c} [{refs}]\n"));
        prev = c;
    }
    bomb.push_str("---\n");
    let (names, diagnostics) = load_with(bomb.as_bytes()).await;
    assert_eq!(names, ["k:good"]);
    assert!(
        diagnostics
            .iter()
            .any(|d| d.message.contains("invalid YAML")),
        "{diagnostics:?}"
    );

    let deep = format!(
        "---\nname: bad\ndescription: d\nx: {}\n---\n",
        "[".repeat(100_000)
    );
    let (names, _) = load_with(deep.as_bytes()).await;
    assert_eq!(names, ["k:good"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_file_lone_delimiter_and_unclosed_frontmatter() {
    assert_skipped(b"", 1, "missing frontmatter").await;
    assert_skipped(b"---", 1, "not closed").await;
    assert_skipped(b"---\nname: bad\ndescription: d\n", 1, "not closed").await;
    assert_skipped(b"# Just markdown\n", 1, "missing frontmatter").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_or_empty_required_fields() {
    assert_skipped(
        b"---\nname: bad\n---\n",
        1,
        "missing required field `description`",
    )
    .await;
    // A missing `name` is not one: the skill takes its folder's name, with a
    // warning (the lenient loading of Claude Code, `tests/lenient.rs`).
    let (names, diagnostics) = load_with(b"---\ndescription: d\n---\n").await;
    assert_eq!(names, ["k:bad", "k:good"]);
    assert!(
        diagnostics
            .iter()
            .all(|d| !d.is_error() && d.message.starts_with("missing field `name`")),
        "{diagnostics:?}"
    );
    assert_skipped(
        b"---\nname:\ndescription: d\n---\n",
        2,
        "field `name` is empty",
    )
    .await;
    assert_skipped(
        b"---\nname: ''\ndescription: d\n---\n",
        2,
        "field `name` is empty",
    )
    .await;
    assert_skipped(
        b"---\nname: bad\ndescription:\n  - a\n---\n",
        3,
        "must be text",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prefix_naming_another_kit() {
    assert_skipped(
        b"---\nname: other:bad\ndescription: d\n---\n",
        2,
        "names kit `other`",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn crlf_and_bom_are_accepted() {
    let (names, diagnostics) =
        load_with(b"\xef\xbb\xbf---\r\nname: bad\r\ndescription: d\r\n---\r\nBody\r\n").await;
    assert_eq!(names, ["k:bad", "k:good"], "{diagnostics:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_megabyte_body_loads() {
    let mut text = b"---\nname: bad\ndescription: d\n---\n".to_vec();
    text.extend(std::iter::repeat_n(b'x', 10 << 20));
    let (names, _) = load_with(&text).await;
    assert_eq!(names, ["k:bad", "k:good"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_names_in_one_kit_keep_the_first_by_path() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path().join("a/SKILL.md"),
        skill_md("same", "First.", ""),
    );
    // `name:` on line 4 of the second file: the report points there.
    write(
        dir.path().join("b/SKILL.md"),
        "---\ndescription: Second.\nlicense: MIT\nname: same\n---\n",
    );
    write(
        dir.path().join("c/SKILL.md"),
        "---\ndescription: Foreign.\nname: other:c\n---\n",
    );
    let kit = Local::new(dir.path())
        .named("k")
        .list_kits()
        .await
        .unwrap()
        .remove(0);
    assert_eq!(kit.skills.len(), 1);
    assert_eq!(kit.skills[0].description, "First.");
    let warning = kit
        .diagnostics
        .iter()
        .find(|d| d.message.contains("duplicate skill name `k:same`"));
    let warning = warning.expect("duplicate reported");
    assert!(warning.path.as_ref().unwrap().ends_with("b/SKILL.md"));
    assert_eq!((warning.line, warning.column), (4, 1), "{warning}");
    assert!(warning.message.contains("a/SKILL.md"));
    let foreign = kit
        .diagnostics
        .iter()
        .find(|d| d.message.contains("names kit `other`"))
        .expect("foreign prefix reported");
    assert!(foreign.path.as_ref().unwrap().ends_with("c/SKILL.md"));
    assert_eq!((foreign.line, foreign.column), (3, 1), "{foreign}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_agent_files_are_skipped_too() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("k");
    write(
        kit.join("skills/good/SKILL.md"),
        skill_md("good", "Good.", ""),
    );
    write(kit.join("AGENT.md"), "---\n[broken\n---\n");
    write(
        kit.join("agents/fine.md"),
        "---\ndescription: Fine.\n---\nPrompt",
    );
    let kit = Local::new(&kit).list_kits().await.unwrap().remove(0);
    assert!(kit.agent.is_none());
    assert_eq!(kit.agents.len(), 1);
    assert_eq!(kit.skills.len(), 1);
    assert!(
        kit.diagnostics
            .iter()
            .any(|d| d.path.as_ref().unwrap().ends_with("AGENT.md"))
    );
}
