//! Semantic checks of the input, and loading the kit through them: every
//! problem becomes a compile error pointed at the offending attribute or at the
//! `path = "…"` literal, naming the file, line and column.

use std::path::PathBuf;

use skillkit_parser::Diagnostic;

use crate::ast::{Input, Kind};
use crate::ctxt::Ctxt;
use crate::load::{self, LoadedKit};

/// Checks `input` and loads its kit; `None` when something was wrong (the
/// problems are in `cx`).
pub(crate) fn check(cx: &mut Ctxt, input: &Input) -> Option<LoadedKit> {
    match input.kind {
        Kind::Struct => {}
        Kind::Enum(token) => not_a_struct(cx, token, "an enum"),
        Kind::Union(token) => not_a_struct(cx, token, "a union"),
    }
    let kit_name = input.kit_name();
    if let Some(name) = &input.attrs.name
        && let Some(problem) = name_problem(&kit_name)
    {
        cx.error_spanned_by(name, problem);
    }
    let Some(path) = &input.attrs.path else {
        if !input.attrs.malformed {
            let message = "`#[derive(Kit)]` needs the kit directory: add \
                           `#[kit(path = \"kits/my_kit\")]`, a path relative to the folder of Cargo.toml";
            match input.attrs.attr {
                Some(attr) => cx.error_spanned_by(attr, message),
                None => cx.error_spanned_by(input.ident, message),
            }
        }
        return None;
    };
    let source = path.value();
    if source.trim().is_empty() {
        cx.error_spanned_by(
            path,
            "`path` is empty: name the kit directory, relative to the folder of Cargo.toml",
        );
        return None;
    }
    let Some(manifest_dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        cx.error_spanned_by(
            path,
            "CARGO_MANIFEST_DIR is not set, so `path` cannot be resolved: build with Cargo",
        );
        return None;
    };
    match load::load(&manifest_dir, &source, &kit_name) {
        Ok(kit) => Some(kit),
        Err(problems) => {
            for problem in &problems {
                cx.error_spanned_by(path, compile_message(problem));
            }
            None
        }
    }
}

/// `path:line:column: message`: the diagnostic without its severity, which the
/// compiler's own `error:` already states.
fn compile_message(diagnostic: &Diagnostic) -> String {
    let mut place = String::new();
    if let Some(path) = &diagnostic.path {
        place = format!("{}:", path.display());
    }
    if diagnostic.line > 0 {
        place += &format!("{}:", diagnostic.line);
        if diagnostic.column > 0 {
            place += &format!("{}:", diagnostic.column);
        }
    }
    if place.is_empty() {
        diagnostic.message.clone()
    } else {
        format!("{place} {}", diagnostic.message)
    }
}

fn not_a_struct(cx: &mut Ctxt, token: impl quote::ToTokens, what: &str) {
    cx.error_spanned_by(
        token,
        format!(
            "`#[derive(Kit)]` works on structs only, not on {what}: write \
             `struct MyKit;` (or a struct with the fields your `execute` needs)"
        ),
    );
}

/// Why `name` cannot be a kit name, if it cannot.
fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("the kit name is empty: write `name = \"files\"`, or leave `name` out to use the struct name in snake_case".to_owned())
    } else if name.contains(skillkit_parser::name::SEPARATOR) || name.contains(char::is_whitespace)
    {
        Some(format!(
            "the kit name `{name}` cannot contain `:` or spaces: skills are named `<kit>:<skill>`, so write a plain name such as `files`"
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_messages_name_the_place_without_the_severity() {
        let d = Diagnostic::error(3, 5, "bad").with_path("kit/a/SKILL.md");
        assert_eq!(compile_message(&d), "kit/a/SKILL.md:3:5: bad");
        assert_eq!(
            compile_message(&Diagnostic::error(0, 0, "no kit")),
            "no kit"
        );
    }

    #[test]
    fn kit_names_are_plain() {
        assert!(name_problem("files").is_none());
        assert!(name_problem("my_kit-2").is_none());
        assert!(name_problem("").is_some());
        assert!(name_problem("a:b").is_some());
        assert!(name_problem("a b").is_some());
    }
}
