//! Names and rows: the naming rule on writes, and rows that break it (or
//! the rules of `SKILL.md`) skipped with a diagnostic naming the row.

use skillkit::{Catalog, Kit, KitProvider, Memory, Skill, Sql};

use super::{execute, insert_skill_row, names};

/// A name that breaks the naming rule is refused with the rule, and a
/// refused write writes nothing (not even the skills of the same kit that
/// were fine).
pub async fn bad_names_are_refused(url: &str) {
    let sql = Sql::open(url).unwrap();
    let before = sql.revision().await.unwrap();
    let other = sql
        .put_skill("files", &Skill::new("net:fetch", "Fetch."))
        .await
        .unwrap_err();
    assert!(other.to_string().contains("names kit `net`"), "{other}");
    let charset = sql
        .put_skill("files", &Skill::new("Read File", "Read."))
        .await
        .unwrap_err();
    assert!(
        charset.to_string().contains("must be lowercase"),
        "{charset}"
    );
    let kit = Kit::new("files")
        .with_skill(Skill::new("read", "Fine."))
        .with_skill(Skill::new("bad--name", "Not fine."));
    let whole = sql.put_kit(&kit).await.unwrap_err();
    assert!(whole.to_string().contains("consecutive hyphens"), "{whole}");
    let bad_kit = sql
        .put_skill("a:b", &Skill::new("x", "X."))
        .await
        .unwrap_err();
    assert!(bad_kit.to_string().contains("kit name"), "{bad_kit}");
    assert_eq!(sql.revision().await.unwrap(), before);
    assert!(sql.list_kits().await.unwrap().is_empty());
}

/// Rows written by hand that break the rules are skipped with a diagnostic
/// naming the row; the good rows of the same kit and the other providers
/// of the catalog are served. A `SKILL.md` pasted whole into `body` (with a
/// NULL description) is read by the parser.
pub async fn corrupt_rows_are_named(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    insert_skill_row(
        url,
        "files",
        "pasted",
        &[(
            "body",
            "---\nname: pasted\ndescription: Pasted whole.\nlicense: MIT\n---\nBody.\n",
        )],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "broken",
        &[("body", "---\nname: [broken\ndescription: x\n---\nBody.\n")],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "net:fetch",
        &[("description", "Names another kit.")],
    )
    .await;
    insert_skill_row(
        url,
        "files",
        "json",
        &[("description", "Bad JSON."), ("metadata", "{\"a\": ")],
    )
    .await;
    insert_skill_row(url, "files", "Loud", &[("description", "Uppercase.")]).await;

    let memory = Memory::new();
    memory.put(Skill::new("mem:hello", "Hello."));
    let catalog = Catalog::builder()
        .provider(sql.clone())
        .provider(memory)
        .build();
    let snapshot = catalog.snapshot().await;
    let served: Vec<String> = snapshot.kits().iter().flat_map(names).collect();
    assert_eq!(
        served,
        ["files:Loud", "files:pasted", "files:read", "mem:hello"]
    );
    let pasted = catalog.get_skill("files:pasted").await.unwrap();
    assert_eq!(
        (pasted.description.as_ref(), pasted.license()),
        ("Pasted whole.", Some("MIT"))
    );
    let said: Vec<String> = catalog
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    let about = |row: &str| {
        said.iter()
            .find(|d| d.starts_with(&format!("skillkit_skills/files/{row}:")))
            .unwrap_or_else(|| panic!("no diagnostic names row {row}: {said:#?}"))
            .clone()
    };
    assert!(about("broken").contains("error"), "{said:#?}");
    assert!(about("net:fetch").contains("names kit `net`"), "{said:#?}");
    assert!(about("json").contains("`metadata` is not a JSON object"));
    assert!(about("Loud").contains("warning"), "{said:#?}");
    // Fixing the row by hand serves it on the next query.
    execute(
        url,
        "UPDATE skillkit_revision SET revision = revision + 1 WHERE id = 1;\
         UPDATE skillkit_skills SET metadata = '{}', \
         revision = (SELECT revision FROM skillkit_revision WHERE id = 1) WHERE name = 'json'",
    )
    .await;
    assert!(catalog.get_skill("files:json").await.is_some());
}

/// A name is read as a file's `name:` line is: the whitespace around it (a
/// space, a newline, a tab) is not part of it. A skill put as ` padded ` is
/// `ws:padded`, the skill a `SKILL.md` saying `name: " padded "` is, and the
/// same skill as one put as `padded`, never a second one beside it; a row
/// written by hand with such a name is served under its trimmed name.
pub async fn names_are_trimmed_as_files_trim_them(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("ws", &Skill::new("padded", "First."))
        .await
        .unwrap();
    for name in [" padded ", "trailing\n", "\ttabbed", " ws : spaced "] {
        sql.put_skill("ws", &Skill::new(name.to_owned(), "Second."))
            .await
            .unwrap_or_else(|e| panic!("{name:?}: {e}"));
    }
    let kit = sql.get_kit("ws").await.unwrap().unwrap();
    assert_eq!(
        names(&kit),
        ["ws:padded", "ws:spaced", "ws:tabbed", "ws:trailing"]
    );
    assert!(kit.skills.iter().all(|s| s.description == "Second."));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws/padded/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "---\nname: \" padded \"\ndescription: From a file.\n---\n",
    )
    .unwrap();
    let local = skillkit::Local::new(dir.path().join("ws"));
    let from_file = &local.list_kits().await.unwrap()[0].skills[0];
    assert_eq!(from_file.name, "ws:padded");

    insert_skill_row(url, "hand", " spaced ", &[("description", "By hand.")]).await;
    let kit = sql.get_kit("hand").await.unwrap().unwrap();
    assert_eq!(names(&kit), ["hand:spaced"]);
    assert!(sql.delete_skill("ws", " padded\n").await.unwrap());
    let kit = sql.get_kit("ws").await.unwrap().unwrap();
    assert_eq!(names(&kit), ["ws:spaced", "ws:tabbed", "ws:trailing"]);
}

/// A row whose name is empty (or only whitespace) is what a `SKILL.md` with
/// `name: ""` is: an error, so the row is skipped with a diagnostic naming
/// it, and the kit's other rows are served. Never a skill named `kit:`.
pub async fn rows_with_empty_names_are_skipped(url: &str) {
    let sql = Sql::open(url).unwrap();
    sql.put_skill("files", &Skill::new("read", "Read a file."))
        .await
        .unwrap();
    insert_skill_row(url, "files", "", &[("description", "No name.")]).await;
    insert_skill_row(url, "files", " \t", &[("description", "Blank name.")]).await;
    let catalog = Catalog::builder().provider(sql.clone()).build();
    let served: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(served, ["files:read"]);
    let kit = sql.get_kit("files").await.unwrap().unwrap();
    let errors: Vec<String> = kit
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("skillkit_skills/files/")
                && e.contains("the skill name is empty")),
        "{errors:#?}"
    );
    let refused = sql
        .put_skill("files", &Skill::new(" ", "Blank."))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("the skill name is empty"),
        "{refused}"
    );
}
