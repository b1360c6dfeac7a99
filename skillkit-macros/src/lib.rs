//! The `#[derive(Kit)]` macro of SkillKit. Use it through `skillkit::Kit`.
//!
//! The derive is a pipeline, as in `thiserror`: `ast` reads the input,
//! `attr` its `#[kit(...)]` attribute, `valid` checks them and loads the kit
//! with the shared parser (`load`), `expand` generates the code (with the
//! static data of `data`, in the impls of `impls`), and `fallback` keeps a
//! failed derive to its own errors. `ctxt` collects every error so all are reported in one pass.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod ast;
mod attr;
mod ctxt;
mod data;
mod digest;
mod expand;
mod fallback;
mod impls;
mod load;
mod valid;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Compiles a kit into the binary: every `SKILL.md`, `AGENT.md` and
/// `agents/*.md` of a directory is parsed at build time and embedded as
/// `static` data; completed with `skillkit::EmbeddedKit`, the struct is a
/// `KitProvider` whose skills it executes.
///
/// ```
/// use skillkit::{EmbeddedKit, Kit, KitProvider, ToolExecution, ToolOutcome};
///
/// #[derive(Kit)]
/// #[kit(path = "kits/greet", name = "greet")]
/// struct Greetings;
///
/// impl EmbeddedKit for Greetings {
///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
///         ToolOutcome::ok(format!("Hello, {}!", execution.arguments()))
///     }
/// }
///
/// let kit = Greetings::embedded_kit();
/// assert_eq!(kit.skills[0].name, "greet:hello");
/// assert_eq!(kit.agents[0].name, "greet:formal");
/// assert_eq!(Greetings.agent_definition().unwrap().name, "greet");
/// ```
///
/// # Attributes
///
/// `#[kit(...)]` takes:
///
/// * `path = "…"` (required): the kit directory, relative to the folder of
///   `Cargo.toml` (`CARGO_MANIFEST_DIR`). Both layouts of a kit work: a folder
///   with `AGENT.md`, `skills/<skill>/SKILL.md` and `agents/<agent>.md`, and a
///   folder that directly holds skill folders (`<path>/<skill>/SKILL.md`), so
///   `#[derive(Kit)] #[kit(path = "skills")]` works as written.
/// * `name = "…"`: the kit name, the `<kit>` of `<kit>:<skill>`. By default the
///   struct name in snake_case (`FilesKit` is `files_kit`).
/// * `crate = "…"`: the path of `skillkit`, for a crate that re-exports it
///   (`crate = "my_crate::skillkit"`). Generated code names `::skillkit` by
///   default.
///
/// # What is generated
///
/// * `embedded_kit() -> &'static Kit`: the kit, built once from the static
///   data; its sub-agents are named `<kit>:<agent>`.
/// * `impl skillkit::embed::KitData`, the same data for skillkit's blanket
///   impls.
///
/// You complete the struct with `skillkit::EmbeddedKit`: `execute` is required
/// (forgetting it is one compile error saying what to write); every other
/// method (`kits`, `agent_definition`, `executes`, `definition`, `resume`,
/// `provider_name`) has the generated behaviour as default and can be
/// overridden, reaching the embedded kit through `Self::embedded_kit()`. Every
/// `EmbeddedKit` is a `KitProvider` (and its skills' tool) built from those
/// methods, so an override is what every consumer sees.
///
/// # Rebuilds
///
/// The macro emits one `include_bytes!` per file, so editing any file of the kit
/// rebuilds the crate. A NEW file is only seen if Cargo watches the directory:
/// add a build script with `skillkit-parser` as a build-dependency:
///
/// ```toml
/// [build-dependencies]
/// skillkit-parser = "0.1"
/// ```
///
/// ```no_run
/// // build.rs
/// fn main() {
///     skillkit_parser::build::track("kits/files");
/// }
/// ```
///
/// # Errors
///
/// Every problem is a compile error, all reported in one pass, pointed at the
/// `path = "…"` literal (or at the offending attribute) and naming the file,
/// line and column: a missing or unknown `path`, a directory that is not a kit,
/// a `SKILL.md` without `name` or `description`, bad YAML, frontmatter that is
/// not a map, a name prefix naming another kit, duplicate skill or agent names,
/// an unknown `#[kit(...)]` key, and a derive on something other than a
/// struct. Problems that do not stop a file from loading (such as a name that
/// breaks the Agent Skills charset) are kept in the kit's `diagnostics`, as the
/// `Local` provider does.
// The build-script example's `fn main` is the point of it.
#[allow(clippy::needless_doctest_main)]
#[proc_macro_derive(Kit, attributes(kit))]
pub fn derive_kit(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
