//! Compile-time kits: `#[derive(Kit)]` embeds a kit's files in the binary, and
//! [`EmbeddedKit`] completes it with the code that executes its skills.
//!
//! The derive reads and parses every `SKILL.md`, `AGENT.md` and `agents/*.md`
//! of the kit directory at build time (with the same parser as the runtime
//! providers) and embeds them as `static` data ([`KitData`]). At run time
//! there is no file access and no YAML parsing: the [`Kit`] is built once from
//! the static data, and every [`list_kits`](crate::KitProvider::list_kits)
//! hands out a clone whose skills are shared `Arc`s with borrowed text.
//!
//! You complete the struct with ONE trait, [`EmbeddedKit`]: `execute` runs its
//! skills, every other method has the derive's behaviour as default. Every
//! `EmbeddedKit` is a [`KitProvider`] (register it in a
//! [`Catalog`](crate::Catalog)) whose skills are executed by the struct.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use skillkit::{Catalog, Kit, ToolExecution, ToolOutcome};
//!
//! #[derive(Kit)]
//! #[kit(path = "kits/greet")] // relative to Cargo.toml; the kit is named `greet`
//! struct Greet;
//!
//! impl skillkit::EmbeddedKit for Greet {
//!     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
//!         ToolOutcome::ok(format!("Hello, {}!", execution.arguments()))
//!     }
//! }
//!
//! let catalog = Catalog::builder().provider(Greet).build();
//! let snapshot = catalog.snapshot().await;
//! let hello = snapshot.skill("greet:hello").unwrap().clone();
//! let tool = snapshot.tool("greet:hello").unwrap();
//! let call = ToolExecution::new(hello, serde_json::json!({"arguments": "Ada"}));
//! assert_eq!(tool.execute(call).await, ToolOutcome::ok("Hello, Ada!"));
//! # });
//! ```

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::agent_definition::AgentDefinition;
use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::skill::Skill;
use crate::tool::ToolDefinition;
use crate::tool::{Tool, ToolExecution, ToolOutcome};

/// The kit data `#[derive(Kit)]` compiled in. The derive implements it; do not
/// implement it by hand.
///
/// ```
/// use skillkit::embed::KitData;
///
/// #[derive(skillkit::Kit)]
/// #[kit(path = "kits/greet")]
/// struct Greet;
/// # impl skillkit::EmbeddedKit for Greet {
/// #     async fn execute(&self, _: skillkit::ToolExecution) -> skillkit::ToolOutcome { skillkit::ToolOutcome::ok("hi") }
/// # }
///
/// let kit: &'static skillkit::Kit = <Greet as KitData>::embedded_kit();
/// assert_eq!(kit.skills[0].name, "greet:hello");
/// ```
///
/// The kit's metadata holds `digests`: each skill's aggregate digest
/// (version 1, `skillkit::lockfile`), computed over its folder's files when
/// the binary was built, so a binary's embedded skills can be checked
/// against a project's lockfile:
///
/// ```
/// # use skillkit::embed::KitData;
/// # #[derive(skillkit::Kit)]
/// # #[kit(path = "kits/greet")]
/// # struct Greet;
/// # impl skillkit::EmbeddedKit for Greet {
/// #     async fn execute(&self, _: skillkit::ToolExecution) -> skillkit::ToolOutcome { skillkit::ToolOutcome::ok("hi") }
/// # }
/// let digest = &Greet::embedded_kit().metadata["digests"]["greet:hello"];
/// assert!(digest.as_str().unwrap().starts_with("sha256:"));
/// ```
pub trait KitData {
    /// The kit compiled into the binary, built once on first use.
    ///
    /// ```
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// # impl skillkit::EmbeddedKit for Greet {
    /// #     async fn execute(&self, e: skillkit::ToolExecution) -> skillkit::ToolOutcome {
    /// #         skillkit::ToolOutcome::ok(format!("Hello, {}!", e.arguments()))
    /// #     }
    /// # }
    /// use skillkit::embed::KitData;
    /// let kit = Greet::embedded_kit();
    /// assert_eq!(kit.name, "greet");
    /// // Built once: every call hands out the same kit.
    /// assert!(std::ptr::eq(kit, Greet::embedded_kit()));
    /// ```
    fn embedded_kit() -> &'static Kit;
}

/// Completes a `#[derive(Kit)]` struct: [`execute`](EmbeddedKit::execute) runs
/// its skills; every other method has the derive's behaviour as default and can
/// be overridden.
///
/// Every `EmbeddedKit` is a [`KitProvider`] whose answers come from these
/// methods, so an override changes what every consumer sees:
/// [`kits`](EmbeddedKit::kits) is what `list_kits`, `get_kit` (and a
/// [`Catalog`](crate::Catalog)) serve, [`agent_definition`](EmbeddedKit::agent_definition)
/// is the root agent they carry, [`executes`](EmbeddedKit::executes) decides
/// which skills are tools. An override still reaches the generated data
/// through `Self::embedded_kit()`. The method names differ from
/// `KitProvider`'s and `Tool`'s, so importing this trait beside them makes no
/// call ambiguous.
///
/// Write methods as `async fn`; their futures must be `Send`.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// use skillkit::{EmbeddedKit, Kit, KitProvider, ProviderError, Skill, ToolExecution, ToolOutcome};
///
/// #[derive(Kit)]
/// #[kit(path = "kits/greet")]
/// struct Greet {
///     languages: Vec<&'static str>,
/// }
///
/// impl EmbeddedKit for Greet {
///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
///         match execution.skill.bare_name() {
///             "hello" => ToolOutcome::ok(format!("Hello, {}!", execution.arguments())),
///             language => ToolOutcome::ok(format!("Hello in {language}, {}!", execution.arguments())),
///         }
///     }
///
///     // The embedded skills, plus one skill per language configured at run time.
///     async fn kits(&self) -> Result<Vec<Kit>, ProviderError> {
///         let mut kit = Self::embedded_kit().clone();
///         for language in &self.languages {
///             kit.insert_skill(Skill::new(format!("greet:{language}"), format!("Greet in {language}.")));
///         }
///         Ok(vec![kit])
///     }
/// }
///
/// let greet = Greet { languages: vec!["french"] };
/// let kit = greet.get_kit("greet").await.unwrap().unwrap();
/// let names: Vec<_> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
/// assert_eq!(names, ["greet:french", "greet:hello"]);
/// assert_eq!(greet.name(), "embedded:greet");
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` derives `Kit` but has no `execute`: implement `skillkit::EmbeddedKit` for it",
    label = "`{Self}` needs an `execute` method to run its skills",
    note = "add the code that executes the kit's skills:\n\n    impl skillkit::EmbeddedKit for {Self} {{\n        async fn execute(&self, execution: skillkit::ToolExecution) -> skillkit::ToolOutcome {{\n            // `execution.skill` is the skill called, `execution.input` its JSON input\n            skillkit::ToolOutcome::ok(execution.arguments())\n        }}\n    }}\n"
)]
pub trait EmbeddedKit: KitData + Send + Sync + 'static {
    /// Executes one call of one of the kit's skills. `execution.skill` is the
    /// full skill called, so one kit can tell its skills apart.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// use std::sync::Arc;
    /// use skillkit::{EmbeddedKit, KitProvider, ToolExecution, ToolOutcome};
    ///
    /// impl EmbeddedKit for Greet {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         match execution.skill.bare_name() {
    ///             "hello" => ToolOutcome::ok(format!("Hello, {}!", execution.arguments())),
    ///             other => ToolOutcome::error(format!("no skill {other} here")),
    ///         }
    ///     }
    /// }
    ///
    /// // What an agent does when the model calls `greet:hello`.
    /// let greet = Arc::new(Greet);
    /// let skill = greet.kits().await.unwrap()[0].skills[0].clone();
    /// let tool = greet.tool(&skill).unwrap();
    /// let call = ToolExecution::new(skill, serde_json::json!({"arguments": "Ada"}));
    /// assert_eq!(skillkit::tool::call(&*tool, call).await, ToolOutcome::ok("Hello, Ada!"));
    /// # });
    /// ```
    fn execute(&self, execution: ToolExecution) -> impl Future<Output = ToolOutcome> + Send;

    /// Continues a call that returned [`ToolOutcome::Pending`]. By default kits
    /// do not pause, so this is an error outcome.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// use std::sync::Arc;
    /// use serde_json::{Value, json};
    /// use skillkit::{EmbeddedKit, KitProvider, ToolExecution, ToolOutcome};
    ///
    /// // Asks before greeting; greets once the answer is yes.
    /// impl EmbeddedKit for Greet {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::Pending(json!({"question": format!("Greet {}?", execution.arguments())}))
    ///     }
    ///
    ///     async fn resume(&self, execution: ToolExecution, _state: Value, decision: Value) -> ToolOutcome {
    ///         match decision.as_str() {
    ///             Some("yes") => ToolOutcome::ok(format!("Hello, {}!", execution.arguments())),
    ///             _ => ToolOutcome::error("the user said no"),
    ///         }
    ///     }
    /// }
    ///
    /// let greet = Arc::new(Greet);
    /// let skill = greet.kits().await.unwrap()[0].skills[0].clone();
    /// let tool = greet.tool(&skill).unwrap();
    /// let call = ToolExecution::new(skill, json!({"arguments": "Ada"}));
    /// let ToolOutcome::Pending(state) = skillkit::tool::call(&*tool, call.clone()).await else { panic!() };
    /// let done = skillkit::tool::resume(&*tool, call, state, "yes".into()).await;
    /// assert_eq!(done, ToolOutcome::ok("Hello, Ada!"));
    /// # });
    /// ```
    fn resume(
        &self,
        execution: ToolExecution,
        state: Value,
        decision: Value,
    ) -> impl Future<Output = ToolOutcome> + Send {
        let _ = (state, decision);
        async move { crate::tool::cannot_resume(&execution.skill) }
    }

    /// What the model is told about `skill`; by default
    /// [`skill_definition`](crate::tool::skill_definition).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// use std::sync::Arc;
    /// use skillkit::{EmbeddedKit, KitProvider, Skill, ToolDefinition, ToolExecution, ToolOutcome};
    ///
    /// // The model is asked for a name rather than free text.
    /// impl EmbeddedKit for Greet {
    ///     async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::ok(format!("Hello, {}!", execution.input["name"].as_str().unwrap_or("you")))
    ///     }
    ///
    ///     fn definition(&self, skill: &Skill) -> ToolDefinition {
    ///         let schema = serde_json::json!({
    ///             "type": "object",
    ///             "properties": {"name": {"type": "string"}},
    ///             "required": ["name"],
    ///         });
    ///         ToolDefinition::new(skill.name.replace(':', "_"), skill.description.to_string(), schema)
    ///     }
    /// }
    ///
    /// let greet = Arc::new(Greet);
    /// let skill = greet.kits().await.unwrap()[0].skills[0].clone();
    /// let definition = greet.tool(&skill).unwrap().definition(&skill);
    /// assert_eq!(definition.input_schema["required"][0], "name");
    /// # });
    /// ```
    fn definition(&self, skill: &Skill) -> ToolDefinition {
        crate::tool::skill_definition(skill)
    }

    /// Whether `execute` runs `skill` (one of the skills [`kits`](EmbeddedKit::kits)
    /// served). By default every skill of the kit is executable; answer `false`
    /// for the ones that are knowledge only (an agent then reads their body
    /// through `activate_skill`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// use std::sync::Arc;
    /// use skillkit::{EmbeddedKit, KitProvider, Skill, ToolExecution, ToolOutcome};
    ///
    /// // `greet:hello` is read, not run.
    /// impl EmbeddedKit for Greet {
    ///     async fn execute(&self, _: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::error("nothing here runs")
    ///     }
    ///
    ///     fn executes(&self, skill: &Skill) -> bool {
    ///         skill.bare_name() != "hello"
    ///     }
    /// }
    ///
    /// let greet = Arc::new(Greet);
    /// let skill = greet.kits().await.unwrap()[0].skills[0].clone();
    /// assert!(greet.tool(&skill).is_none());
    /// # });
    /// ```
    fn executes(&self, skill: &Skill) -> bool {
        let _ = skill;
        true
    }

    /// The provider's name in logs: `embedded:<kit>` by default.
    ///
    /// ```
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// # impl skillkit::EmbeddedKit for Greet {
    /// #     async fn execute(&self, e: skillkit::ToolExecution) -> skillkit::ToolOutcome {
    /// #         skillkit::ToolOutcome::ok(format!("Hello, {}!", e.arguments()))
    /// #     }
    /// # }
    /// use skillkit::{EmbeddedKit, KitProvider};
    /// assert_eq!(Greet.provider_name(), "embedded:greet");
    /// // The name a catalog's logs and errors give the provider.
    /// assert_eq!(Greet.name(), "embedded:greet");
    /// ```
    fn provider_name(&self) -> Cow<'_, str> {
        Cow::Owned(format!("embedded:{}", Self::embedded_kit().name))
    }

    /// The kits served, by `list_kits` and `get_kit` alike: by default the
    /// embedded kit, with [`agent_definition`](EmbeddedKit::agent_definition)
    /// as its root agent. The clone copies no text: skills are shared `Arc`s
    /// and their text is `static`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// # impl skillkit::EmbeddedKit for Greet {
    /// #     async fn execute(&self, e: skillkit::ToolExecution) -> skillkit::ToolOutcome {
    /// #         skillkit::ToolOutcome::ok(format!("Hello, {}!", e.arguments()))
    /// #     }
    /// # }
    /// use skillkit::EmbeddedKit;
    /// let kits = Greet.kits().await.unwrap();
    /// assert_eq!(kits.len(), 1);
    /// assert_eq!(kits[0].skills[0].name, "greet:hello");
    /// // The root agent of `AGENT.md` comes with it.
    /// assert!(kits[0].agent.is_some());
    /// # });
    /// ```
    fn kits(&self) -> impl Future<Output = Result<Vec<Kit>, ProviderError>> + Send {
        async {
            let mut kit = Self::embedded_kit().clone();
            kit.agent = self.agent_definition();
            Ok(vec![kit])
        }
    }

    /// The kit's root agent: by default the parsed `AGENT.md`, `None` when the
    /// kit has none. Sub-agents (`agents/*.md`) are in the kit, named
    /// `<kit>:<agent>`.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # #[derive(skillkit::Kit)]
    /// # #[kit(path = "kits/greet")]
    /// # struct Greet;
    /// use std::sync::Arc;
    /// use skillkit::{AgentDefinition, EmbeddedKit, ToolExecution, ToolOutcome};
    ///
    /// // The kit's `AGENT.md` is left out: this application brings its own agent.
    /// impl EmbeddedKit for Greet {
    ///     async fn execute(&self, _: ToolExecution) -> ToolOutcome {
    ///         ToolOutcome::ok("hi")
    ///     }
    ///
    ///     fn agent_definition(&self) -> Option<Arc<AgentDefinition>> {
    ///         None
    ///     }
    /// }
    ///
    /// assert!(Greet.kits().await.unwrap()[0].agent.is_none());
    /// # });
    /// ```
    fn agent_definition(&self) -> Option<Arc<AgentDefinition>> {
        Self::embedded_kit().agent.clone()
    }
}

/// Every [`EmbeddedKit`] is a provider: the kits its `kits` serves, its
/// skills executed by its `execute` (those it `executes`).
#[async_trait::async_trait]
impl<T: EmbeddedKit> KitProvider for T {
    fn name(&self) -> Cow<'_, str> {
        self.provider_name()
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        self.kits().await
    }

    async fn get_kit(&self, name: &str) -> Result<Option<Kit>, ProviderError> {
        Ok(self.kits().await?.into_iter().find(|kit| kit.name == name))
    }

    fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
        self.executes(skill)
            .then(|| Arc::new(Executor(self)) as Arc<dyn Tool>)
    }
}

/// The [`Tool`] of an embedded kit: its `execute`, `resume` and `definition`.
struct Executor<T>(Arc<T>);

#[async_trait::async_trait]
impl<T: EmbeddedKit> Tool for Executor<T> {
    fn definition(&self, skill: &Skill) -> ToolDefinition {
        self.0.definition(skill)
    }

    async fn execute(&self, execution: ToolExecution) -> ToolOutcome {
        self.0.execute(execution).await
    }

    async fn resume(&self, execution: ToolExecution, state: Value, decision: Value) -> ToolOutcome {
        self.0.resume(execution, state, decision).await
    }
}

/// What the code generated by `#[derive(Kit)]` names. Not a public API.
#[doc(hidden)]
pub mod generated;
