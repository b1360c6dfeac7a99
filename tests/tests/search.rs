//! The search index over a catalog (`Catalog::search`): ranking (plurals,
//! typos, qualified and bare names, body below name and description, an
//! embedder combined with the lexical score) and freshness (over `Local` and
//! `Memory`, counting the skills re-indexed).

use std::path::Path;
use std::time::{Duration, SystemTime};

use skillkit::search::EmbedError;
use skillkit::search::{Embedder, SearchHit};
use skillkit::{Catalog, Local, Memory, Skill};
use skillkit_tests::{skill_md, write};

fn names(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.skill.name.as_ref()).collect()
}

/// Sets the modification time of everything under `dir` (files and
/// folders) a minute back, so `Local` can trust the stamps (its racy rule
/// re-reads what changed within the clock's granularity of now).
fn age(dir: &Path) {
    let then = SystemTime::now() - Duration::from_secs(60);
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            age(&path);
        }
        std::fs::File::open(&path)
            .and_then(|f| f.set_modified(then))
            .expect("set mtime");
    }
    std::fs::File::open(dir)
        .and_then(|f| f.set_modified(then))
        .expect("set mtime");
}

/// Sets the modification time of `path` and of its folders up to `top` a
/// minute back (only those: aging a file changes its ctime, a change `Local`
/// sees).
fn age_one(path: &Path, top: &Path) {
    let then = SystemTime::now() - Duration::from_secs(60);
    for p in path.ancestors().take_while(|p| p.starts_with(top)) {
        std::fs::File::open(p)
            .and_then(|f| f.set_modified(then))
            .expect("set mtime");
    }
}

/// Waits until the background build has read every body (bounded: a
/// build that never ends fails the test).
async fn bodies_indexed(catalog: &Catalog) {
    for _ in 0..500 {
        if catalog.search_stats().bodies_pending == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "the body build did not finish: {:?}",
        catalog.search_stats()
    );
}

fn memory_catalog(skills: &[(&'static str, &'static str, &'static str)]) -> Catalog {
    let memory = Memory::new();
    for (name, description, body) in skills {
        memory.put(Skill::new(*name, *description).with_body(*body));
    }
    Catalog::builder().provider(memory).build()
}

#[tokio::test(flavor = "multi_thread")]
async fn plurals_and_word_endings_match() {
    let catalog = memory_catalog(&[
        (
            "office:spreadsheet",
            "Edit a spreadsheet and its formula.",
            "",
        ),
        ("office:slides", "Build a presentation deck.", ""),
        (
            "data:lookup",
            "Run one query against the library catalog.",
            "",
        ),
    ]);
    // Beyond any typo budget (`queries` is 3 edits from `query`): stemming.
    assert_eq!(
        names(&catalog.search("queries for libraries", 5).await),
        ["data:lookup"]
    );
    assert_eq!(
        names(&catalog.search("spreadsheets formulas", 5).await),
        ["office:spreadsheet"]
    );
    assert_eq!(
        names(&catalog.search("building presentations", 5).await),
        ["office:slides"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn small_typos_match() {
    let catalog = memory_catalog(&[
        (
            "ops:kubernetes-deploy",
            "Deploy a service to a Kubernetes cluster.",
            "",
        ),
        ("ops:docker-build", "Build a Docker image.", ""),
    ]);
    // Two typos in a long word, one in a shorter one.
    assert_eq!(
        names(&catalog.search("kuberentes", 5).await),
        ["ops:kubernetes-deploy"]
    );
    assert_eq!(
        names(&catalog.search("dokcer", 5).await),
        ["ops:docker-build"]
    );
    // A short word gets no typo budget: `doc` is not `docker`.
    assert!(catalog.search("dcker", 5).await.len() <= 1);
    assert!(catalog.search("qqqqqqq", 5).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn qualified_and_bare_names_match() {
    let catalog = memory_catalog(&[
        ("pdf:reader", "Open documents.", ""),
        ("epub:reader", "Open e-books.", ""),
        // Mentions both words more than once, but is named otherwise.
        (
            "notes:summary",
            "A reader of pdf files: any pdf, any reader.",
            "",
        ),
    ]);
    assert_eq!(
        names(&catalog.search("pdf:reader", 5).await)[0],
        "pdf:reader"
    );
    assert_eq!(
        names(&catalog.search("epub:reader", 5).await)[0],
        "epub:reader"
    );
    let bare = catalog.search("reader", 5).await;
    assert_eq!(bare.len(), 3);
    assert!(
        names(&bare)[..2].contains(&"pdf:reader") && names(&bare)[..2].contains(&"epub:reader"),
        "{:?}",
        names(&bare)
    );
    assert_eq!(
        names(&catalog.search("summary", 5).await),
        ["notes:summary"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn body_terms_rank_below_name_and_description_terms() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("finance");
    write(
        kit.join("skills/billing/SKILL.md"),
        skill_md(
            "billing",
            "Create an invoice for a customer.",
            "Fill in the form.\n",
        ),
    );
    write(
        kit.join("skills/ledger/SKILL.md"),
        skill_md(
            "ledger",
            "Keep the accounts balanced.",
            "Every invoice becomes a ledger line; an invoice paid twice is flagged. Invoice numbers are unique.\n",
        ),
    );
    write(
        kit.join("skills/taxes/SKILL.md"),
        skill_md("taxes", "File the quarterly taxes.", "Ask an accountant.\n"),
    );
    let catalog = Catalog::builder().provider(Local::new(&kit)).build();
    let hits = catalog.search("invoice", 5).await;
    // The body is read from its file (a Local skill's body is not in memory).
    assert_eq!(names(&hits), ["finance:billing", "finance:ledger"]);
    assert!(hits[0].score > hits[1].score);
}

#[tokio::test(flavor = "multi_thread")]
async fn local_add_edit_delete_reindex_only_that_skill() {
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("tools");
    for i in 0..100 {
        write(
            kit.join(format!("skills/tool-{i:03}/SKILL.md")),
            skill_md(
                &format!("tool-{i:03}"),
                &format!("Tool number {i}."),
                "Plain steps.\n",
            ),
        );
    }
    age(&kit);
    let catalog = Catalog::builder().provider(Local::new(&kit)).build();
    assert!(catalog.search("zebra", 5).await.is_empty());
    bodies_indexed(&catalog).await;
    assert_eq!(catalog.search_stats().reindexed, 100);
    assert_eq!(catalog.search_stats().skills, 100);

    // Added.
    write(
        kit.join("skills/zebra/SKILL.md"),
        skill_md("zebra", "Draw zebra stripes.", "Use a striped brush.\n"),
    );
    assert_eq!(names(&catalog.search("zebra", 5).await), ["tools:zebra"]);
    assert_eq!(catalog.search_stats().reindexed, 101);
    // Its body is indexed with it (one skill: read before the answer).
    assert_eq!(names(&catalog.search("brush", 5).await), ["tools:zebra"]);
    let zebra = kit.join("skills/zebra/SKILL.md");
    age_one(&zebra, &kit);
    catalog.search("zebra", 5).await;
    let settled = catalog.search_stats().reindexed;
    assert!(settled <= 103, "{settled}");

    // Edited: the old words leave, the new ones come, one skill re-indexed.
    // (Aged, or `Local` re-reads the just-written file on every query, a new
    // skill version each time.)
    write(
        &zebra,
        skill_md("zebra", "Draw giraffe patches.", "Use a spotted brush.\n"),
    );
    age_one(&zebra, &kit);
    assert_eq!(names(&catalog.search("giraffe", 5).await), ["tools:zebra"]);
    assert!(catalog.search("stripes", 5).await.is_empty());
    assert_eq!(names(&catalog.search("spotted", 5).await), ["tools:zebra"]);
    assert_eq!(catalog.search_stats().reindexed, settled + 1);

    // Deleted.
    std::fs::remove_dir_all(kit.join("skills/zebra")).unwrap();
    assert!(catalog.search("giraffe", 5).await.is_empty());
    assert_eq!(catalog.search_stats().skills, 100);
    assert_eq!(catalog.search_stats().reindexed, settled + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_put_and_delete_are_seen_by_the_next_search() {
    let memory = Memory::new();
    for i in 0..10 {
        memory.put(Skill::new(format!("lib:item-{i}"), format!("Item {i}.")));
    }
    let catalog = Catalog::builder().provider(memory.clone()).build();
    assert!(catalog.search("weather", 5).await.is_empty());
    assert_eq!(catalog.search_stats().reindexed, 10);

    memory.put(Skill::new("lib:weather", "Tell the weather forecast.").with_body("Ask the sky."));
    assert_eq!(
        names(&catalog.search("forecasts", 5).await),
        ["lib:weather"]
    );
    assert_eq!(names(&catalog.search("sky", 5).await), ["lib:weather"]);
    assert_eq!(catalog.search_stats().reindexed, 11);

    memory.put(Skill::new("lib:weather", "Tell the tides.").with_body("Ask the sea."));
    assert!(catalog.search("forecast", 5).await.is_empty());
    assert_eq!(names(&catalog.search("tides", 5).await), ["lib:weather"]);
    assert_eq!(catalog.search_stats().reindexed, 12);

    memory.delete("lib:weather");
    assert!(catalog.search("tides", 5).await.is_empty());
    assert_eq!(catalog.search_stats().skills, 10);
    assert_eq!(catalog.search_stats().reindexed, 12);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unchanged_catalog_reindexes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for k in 0..3 {
        for i in 0..40 {
            write(
                dir.path().join(format!("kit{k}/s{i}/SKILL.md")),
                skill_md(&format!("s{i}"), "Sort the socks.", "Pair them.\n"),
            );
        }
    }
    age(dir.path());
    let memory = Memory::new();
    memory.put(Skill::new("mem:one", "Sort the shoes."));
    let catalog = Catalog::builder()
        .provider(Local::each(dir.path()))
        .provider(memory)
        .build();
    catalog.search("socks", 5).await;
    bodies_indexed(&catalog).await;
    let first = catalog.search_stats();
    assert_eq!((first.skills, first.reindexed), (121, 121));
    for _ in 0..3 {
        assert_eq!(catalog.search("pair", 200).await.len(), 120);
    }
    assert_eq!(catalog.search_stats().reindexed, 121);
    // A clone shares the index.
    catalog.clone().search("shoes", 5).await;
    assert_eq!(catalog.search_stats().reindexed, 121);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_build_reads_bodies_in_the_background() {
    let memory = Memory::new();
    for i in 0..500 {
        let body = if i == 321 {
            "The secret word is marmalade."
        } else {
            "Nothing here."
        };
        memory.put(Skill::new(format!("big:s{i:03}"), format!("Skill {i}.")).with_body(body));
    }
    let catalog = Catalog::builder().provider(memory).build();
    // Names and descriptions answer at once.
    assert_eq!(names(&catalog.search("big:s007", 1).await), ["big:s007"]);
    bodies_indexed(&catalog).await;
    assert_eq!(names(&catalog.search("marmalade", 5).await), ["big:s321"]);
    assert_eq!(catalog.search_stats().reindexed, 500);
}

/// A toy model: each text is the counts of three topics' words (the
/// stand-in endpoint's vectors, computed in process).
struct Topics;

#[skillkit::async_trait]
impl Embedder for Topics {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| skillkit_tests::embeddings::vector(text))
            .collect())
    }
}

struct Failing;

#[skillkit::async_trait]
impl Embedder for Failing {
    async fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err("model not loaded".into())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_embedder_combines_with_the_lexical_score() {
    let skills = [
        ("fin:billing", "Send an invoice and track the payment.", ""),
        // Lexically the better match for "payment cash" (a name word)…
        (
            "shop:cash-register",
            "Keep cash; take a photo, picture and image of every receipt drawing.",
            "",
        ),
        ("art:sketch", "Make a drawing.", ""),
    ];
    let lexical = memory_catalog(&skills);
    assert_eq!(
        names(&lexical.search("payment cash", 5).await)[0],
        "shop:cash-register"
    );
    assert!(lexical.search("photograph", 5).await.is_empty());

    let memory = Memory::new();
    for (name, description, _) in skills {
        memory.put(Skill::new(name, description));
    }
    let semantic = Catalog::builder().provider(memory).embedder(Topics).build();
    // …but billing is all about money and the register mostly about
    // pictures: fused by rank, the two tie (each first in one ranking and
    // second in the other; ties go by name), where words alone put the
    // register first.
    assert_eq!(
        names(&semantic.search("payment cash", 5).await)[0],
        "fin:billing"
    );
    // A word no skill contains is still found by meaning ("photo" is in it).
    let by_meaning = semantic.search("photograph", 5).await;
    assert_eq!(names(&by_meaning), ["art:sketch", "shop:cash-register"]);

    // A failing embedder leaves the lexical ranking.
    let memory = Memory::new();
    for (name, description, _) in skills {
        memory.put(Skill::new(name, description));
    }
    let failing = Catalog::builder()
        .provider(memory)
        .embedder(Failing)
        .build();
    assert_eq!(
        names(&failing.search("payment cash", 5).await)[0],
        "shop:cash-register"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_stays_right_when_the_index_drops_its_dead_entries() {
    let memory = Memory::new();
    let put_all = |word: &str, count: usize| {
        for i in 0..count {
            memory.put(Skill::new(
                format!("k:s{i:04}"),
                format!("{word} number {i}."),
            ));
        }
    };
    put_all("Alpha", 1500);
    let catalog = Catalog::builder().provider(memory.clone()).build();
    assert_eq!(catalog.search("alpha", 2000).await.len(), 1500);
    bodies_indexed(&catalog).await;
    let before = catalog.search_stats().index_bytes;
    // Every skill changes, then most leave: dead entries outnumber live
    // ones, and the index renumbers what stays.
    put_all("Beta", 1500);
    for i in 500..1500 {
        memory.delete(&format!("k:s{i:04}"));
    }
    assert_eq!(catalog.search("beta", 2000).await.len(), 500);
    bodies_indexed(&catalog).await;
    assert!(catalog.search("alpha", 2000).await.is_empty());
    // Smaller than with the 1,500 first versions alone: the dead ones left.
    assert!(catalog.search_stats().index_bytes < before, "compacted");
    assert_eq!(names(&catalog.search("k:s0123", 1).await), ["k:s0123"]);
    memory.put(Skill::new("k:s0007", "Gamma rays."));
    assert_eq!(names(&catalog.search("gamma", 5).await), ["k:s0007"]);
    assert_eq!(catalog.search("beta", 2000).await.len(), 499);
    let stats = catalog.search_stats();
    assert_eq!((stats.skills, stats.reindexed), (500, 1500 + 500 + 1));
}

/// The index reads a body whole unless told to read only its lead: with
/// `search_body_bytes(1024)` a word of the lead is found and one past it is
/// not; by default both are. Over `Local` (the file read no further) and
/// `Memory`.
#[tokio::test]
async fn a_body_is_indexed_whole_unless_a_lead_is_asked_for() {
    let filler = "steps and details of the procedure. ".repeat(80);
    assert!(filler.len() > 1024);
    let body = format!("Overview: quasarbright tables.\n\n{filler}\nlate nebulaword appendix.\n");
    let dir = tempfile::tempdir().unwrap();
    let kit = dir.path().join("kit");
    write(
        kit.join("skills/lead/SKILL.md"),
        skill_md("lead", "Work with data.", &body),
    );
    age(dir.path());
    let memory = Memory::new();
    memory.put(Skill::new("mem:lead", "Work with data.").with_body(body.clone()));
    for (label, whole) in [("a lead of 1 KiB", false), ("default", true)] {
        let mut builder = Catalog::builder()
            .provider(Local::new(&kit))
            .provider(memory.clone());
        if !whole {
            builder = builder.search_body_bytes(1024);
        }
        let catalog = builder.build();
        assert_eq!(
            names(&catalog.search("quasarbright", 5).await),
            ["kit:lead", "mem:lead"],
            "{label}"
        );
        let late = catalog.search("nebulaword", 5).await;
        match whole {
            false => assert!(late.is_empty(), "{label}: {:?}", names(&late)),
            true => assert_eq!(names(&late), ["kit:lead", "mem:lead"], "{label}"),
        }
    }
}

/// A query's cost is bounded: only its first `MAX_QUERY_TERMS` distinct
/// words are matched (a word past them finds nothing), repeats count once,
/// and only its first `MAX_QUERY_BYTES` are read. A query of a megabyte is
/// answered, from its first words.
#[tokio::test(flavor = "multi_thread")]
async fn a_query_is_cut_to_its_first_words() {
    use skillkit::search::{MAX_QUERY_BYTES, MAX_QUERY_TERMS};
    let catalog = memory_catalog(&[
        ("notes:pdf", "Read PDF files.", ""),
        ("notes:zebra", "Draw zebras.", ""),
    ]);
    let fillers: Vec<String> = (0..MAX_QUERY_TERMS).map(|i| format!("filler{i}")).collect();
    let past = format!("{} zebra", fillers.join(" "));
    assert!(
        catalog.search(&past, 5).await.is_empty(),
        "zebra is word 33"
    );
    let repeated = format!("{} zebra", "filler ".repeat(MAX_QUERY_TERMS * 4));
    assert_eq!(names(&catalog.search(&repeated, 5).await), ["notes:zebra"]);
    let far = format!("{} zebra", " ".repeat(MAX_QUERY_BYTES));
    assert!(
        catalog.search(&far, 5).await.is_empty(),
        "zebra is past the bytes read"
    );
    let huge = format!("pdf {}", "lorem ipsum dolor ".repeat(60_000));
    assert!(huge.len() > 1_000_000);
    assert_eq!(names(&catalog.search(&huge, 5).await), ["notes:pdf"]);
}

/// Short forms and compounds match what they stand for: a name's initials
/// (`tdd`), an acronym another skill's text defines (`pr`, defined as
/// `Pull Request (PR)`), a numeronym (`k8s`), and a compound written split
/// or joined (`worktrees` and `work trees`); none of the skills found holds
/// the query's word.
#[tokio::test(flavor = "multi_thread")]
async fn acronyms_numeronyms_and_compounds_match_their_words() {
    let catalog = memory_catalog(&[
        (
            "dev:test-driven-development",
            "Write the failing test first.",
            "",
        ),
        ("dev:test-data", "Make fixtures for tests.", ""),
        (
            "git:glossary",
            "Words of the trade.",
            "Open a Pull Request (PR) when the branch is ready.",
        ),
        (
            "git:answer-review",
            "Answer the comments left on a pull request.",
            "",
        ),
        ("git:comments", "Write good code comments.", ""),
        ("ops:deploy", "Deploy services to Kubernetes clusters.", ""),
        ("ops:kettle", "Boil water in a kettle.", ""),
        (
            "git:parallel",
            "Check out branches side by side in work trees.",
            "",
        ),
        ("git:worktree-cleanup", "Prune stale worktrees.", ""),
    ]);
    let top = async |query: &str| {
        let hits = catalog.search(query, 3).await;
        hits.first().map(|h| h.skill.name.to_string())
    };
    assert_eq!(
        top("tdd").await.as_deref(),
        Some("dev:test-driven-development")
    );
    bodies_indexed(&catalog).await;
    assert_eq!(
        top("pr comments").await.as_deref(),
        Some("git:answer-review")
    );
    assert_eq!(top("k8s").await.as_deref(), Some("ops:deploy"));
    let split = names(&catalog.search("worktrees", 5).await).join(" ");
    assert!(split.contains("git:parallel"), "{split}");
    let joined = names(&catalog.search("stale work trees", 5).await).join(" ");
    assert!(joined.starts_with("git:worktree-cleanup"), "{joined}");
}

/// The whole body is indexed, not its first KiB: a tool named only at the
/// end of a long body is found.
#[tokio::test(flavor = "multi_thread")]
async fn a_word_far_down_the_body_is_found() {
    let filler = "Keep the steps small and check each one. ".repeat(200);
    let body: &'static str =
        Box::leak(format!("{filler}\nRun `promtool check config`.\n").into_boxed_str());
    assert!(body.len() > 8 * 1024);
    let catalog = memory_catalog(&[
        ("ops:monitoring", "Set up monitoring.", body),
        ("ops:other", "Set up other things.", "Nothing here."),
    ]);
    catalog.search("warm", 1).await;
    bodies_indexed(&catalog).await;
    assert_eq!(
        names(&catalog.search("promtool", 5).await),
        ["ops:monitoring"]
    );
}
