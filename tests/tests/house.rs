//! The house of `skillkit/src`, read from the source: which top-level module
//! imports which (`crate::…` in code, not in comments, docs or the test
//! modules at the end of a file). The floors of `docs/architecture.md` are
//! kept: no import circle, the plain data imports nothing above it, the LLM
//! layer stands beside it, the tool path imports neither of its two callers,
//! and the agent and the MCP server do not import each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `skillkit/src`.
fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .join("skillkit/src")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`agent` for `agent/run.rs`,
/// `tool` for `tool.rs`); `None` for `lib.rs`.
fn module_of(root: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(root).expect("under the source folder");
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_owned())
}

/// The modules `text` names as `crate::<module>`, in code only.
fn imports(text: &str) -> BTreeSet<String> {
    // A file's unit tests sit in a `#[cfg(test)]` module at its end.
    let code = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().last();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `skillkit::crate::…` is no such thing; `mycrate::` is not ours
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::Skill` (a root re-export) is no module.
            if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                found.insert(name);
            }
        }
    }
    found
}

/// Module → the modules it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = source();
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in all {
        let Some(module) = module_of(&root, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(imports(&text).into_iter().filter(|m| *m != module));
    }
    graph
}

/// A circle of imports through `start`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if visit(graph, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_owned()];
    visit(graph, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn the_source_is_read() {
    let graph = graph();
    // The reader itself finds what is there: the agent uses the tool path.
    assert!(graph["agent"].contains("dispatch"), "{graph:?}");
    assert!(graph["mcp"].contains("dispatch"), "{graph:?}");
    assert!(imports("use crate::kit::Kit;\n// crate::agent\n").contains("kit"));
    assert!(!imports("/// [`x`](crate::agent::X)\n").contains("agent"));
}

#[test]
fn no_module_imports_itself_back() {
    let graph = graph();
    for module in graph.keys() {
        assert_eq!(circle(&graph, module), None, "an import circle");
    }
}

#[test]
fn the_plain_data_imports_nothing_above_it() {
    let graph = graph();
    let plain: BTreeSet<&str> = ["skill", "kit", "tool", "agent_definition", "prompt"].into();
    for module in &plain {
        for import in &graph[*module] {
            assert!(
                plain.contains(import.as_str()),
                "`{module}` (plain data) imports `{import}`"
            );
        }
    }
}

#[test]
fn the_llm_layer_stands_beside_the_plain_data() {
    let graph = graph();
    for import in &graph["llm"] {
        assert!(
            ["tool", "retry"].contains(&import.as_str()),
            "the LLM layer imports `{import}`"
        );
    }
}

#[test]
fn the_agent_and_the_server_stand_side_by_side_on_the_tool_path() {
    let graph = graph();
    for (module, above) in [
        ("dispatch", "agent"),
        ("dispatch", "mcp"),
        ("agent", "mcp"),
        ("mcp", "agent"),
        ("providers", "agent"),
        ("providers", "dispatch"),
    ] {
        assert!(
            !graph[module].contains(above),
            "`{module}` imports `{above}`"
        );
    }
}
